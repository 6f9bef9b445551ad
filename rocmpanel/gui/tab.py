"""What the main window expects of a tab, declared instead of probed with ``getattr``."""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

from rocmpanel.gui.context import AppContext


@runtime_checkable
class Tab(Protocol):
    """A QWidget built as ``Cls(ctx, parent)``; ``title`` names its page in the window.

    ``shutdown`` is called once when the window closes: stop timers, threads and jobs,
    keep what must be kept. It must return quickly (the window is closing).
    """

    title: ClassVar[str]

    def shutdown(self) -> None: ...


class TabFactory(Protocol):
    """A tab class: ``Cls(ctx, parent)``."""

    __name__: str  # the class's name, for messages about a tab that failed to load
    title: ClassVar[str]

    def __call__(self, ctx: AppContext, parent: object | None = ..., /) -> Tab: ...
