"""The one error path: a failure carries a message for the user and a detail for the log."""

from __future__ import annotations


class PanelError(Exception):
    """A failure the user should read: ``message`` is shown, ``detail`` goes to the log."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def __str__(self) -> str:
        return self.message if not self.detail else f"{self.message}\n{self.detail}"
