"""Saving a health report: its format from the file name, and one safe write.

Shared by ``rocmpanel report --out`` and the window's Export dialog. The write is atomic
(``base.atomic``); a file the report replaces is backed up first (the user may have named
their own notes by mistake), into ``data/backups``. A target that is no regular file (a
folder, a FIFO, a device) is refused with a sentence: replacing a FIFO by a file, as a
rename would, is not what anyone asked for. A missing folder is refused too, rather than
made (it is more often a typing mistake than a wish).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, resolved, write_atomic
from rocmpanel.base.errors import PanelError

SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}
BACKUPS_KEPT = 5


def format_for(path: Path | str) -> str | None:
    """ "html" or "md" from the name's suffix (any case), or None for another suffix."""
    return SUFFIXES.get(Path(path).suffix.lower())


def bad_suffix_message(path: Path | str) -> str:
    return (
        f"Cannot tell the format of {str(path)!r}: name a file ending in .html or .md "
        "(or give - to print Markdown)."
    )


def check_target(path: Path) -> None:
    """PanelError when ``path`` cannot be a report file (what is there, or no folder)."""
    target = resolved(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        if not target.parent.is_dir():
            raise PanelError(
                f"Cannot save the report as {path}: the folder {target.parent} does not exist."
            ) from None
        return
    except OSError as exc:
        raise PanelError(f"Cannot save the report as {path}: {exc.strerror or exc}.") from exc
    if stat.S_ISDIR(mode):
        raise PanelError(f"Cannot save the report as {path}: it is a folder. Name a file.")
    if not stat.S_ISREG(mode):
        raise PanelError(
            f"Cannot save the report as {path}: it is not a regular file (a FIFO, a socket "
            "or a device). Name a file."
        )


def save_report(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically, backing up a file it replaces; returns the
    file written. PanelError with a sentence for the user when it cannot."""
    check_target(path)
    if os.path.lexists(path):
        # Named by the absolute path: "report.md" of two folders are two files' backups.
        backup_file(resolved(path).absolute(), paths.backups_dir() / "reports", BACKUPS_KEPT)
    return write_atomic(path, text.encode("utf-8"))
