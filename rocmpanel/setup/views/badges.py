"""The coloured badge the Setup tab's GPU cards and checklist rows share."""

from __future__ import annotations


def badge_style(fg: str, bg: str) -> str:
    """The style sheet of a badge label: ``fg`` text on a rounded ``bg``."""
    return (
        f"QLabel {{ color: {fg}; background: {bg}; border-radius: 4px; "
        "padding: 2px 8px; font-weight: bold; }"
    )
