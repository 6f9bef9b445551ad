"""Start-up: checks that turn Qt's aborts into messages; what waits for the first paint."""

from __future__ import annotations

import ctypes
import logging
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

import pytest

from rocmpanel.shell.app import (
    LOG_MAX_BYTES,
    after_first_paint,
    missing_xcb_library,
    rotate_log,
    setup_logging,
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 plugin check is Linux-only")
def test_missing_xcb_library_is_named(monkeypatch) -> None:
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")

    def fail(path, mode=0):
        raise OSError(f"{path}: libxcb-cursor.so.0: cannot open shared object file: No such file")

    monkeypatch.setattr(ctypes, "CDLL", fail)
    assert missing_xcb_library() == "libxcb-cursor.so.0"


def test_no_check_off_x11(monkeypatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: pytest.fail("must not load the plugin"))
    assert missing_xcb_library() is None


def test_the_log_starts_plain_and_rotates_after_the_first_paint(root_logger) -> None:
    setup_logging(rotating=False)
    [plain] = [h for h in root_logger.handlers if getattr(h, "_rocmpanel", False)]
    assert type(plain) is logging.FileHandler  # no logging.handlers before the first paint
    logging.getLogger("rocmpanel.test").info("before the first paint")
    rotate_log()
    [rotating] = [h for h in root_logger.handlers if getattr(h, "_rocmpanel", False)]
    assert isinstance(rotating, RotatingFileHandler)
    assert rotating.baseFilename == plain.baseFilename and rotating.maxBytes == LOG_MAX_BYTES
    assert rotating.formatter is plain.formatter
    logging.getLogger("rocmpanel.test").info("after it")
    rotating.flush()
    text = Path(rotating.baseFilename).read_text(encoding="utf-8")
    assert "INFO rocmpanel.test: before the first paint" in text
    assert "INFO rocmpanel.test: after it" in text
    setup_logging()  # again (a second window): nothing is added
    assert [h for h in root_logger.handlers if getattr(h, "_rocmpanel", False)] == [rotating]


def test_the_icon_is_set_after_the_first_paint(qtbot, root_logger) -> None:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    previous = app.windowIcon()
    app.setWindowIcon(QIcon())
    try:
        setup_logging(rotating=False)
        after_first_paint(app)
        assert not app.windowIcon().isNull()
        [handler] = [h for h in root_logger.handlers if getattr(h, "_rocmpanel", False)]
        assert isinstance(handler, RotatingFileHandler)
    finally:
        app.setWindowIcon(previous)


@pytest.mark.parametrize("argv", [[], ["--smoke-test"]])
def test_opening_the_window_builds_no_command_parser(monkeypatch, argv) -> None:
    from rocmpanel.shell import app, cli

    opened: list[bool] = []
    monkeypatch.setattr(
        app, "run_gui", lambda smoke_test=False, demo=False: opened.append(smoke_test) or 0
    )
    monkeypatch.setattr(cli, "build_parser", lambda: pytest.fail("the window needs no parser"))
    assert cli.main(argv) == 0
    assert opened == [bool(argv)]


def test_commands_still_parse(monkeypatch, capsys) -> None:
    from rocmpanel.shell import app, cli

    monkeypatch.setattr(
        app, "run_gui", lambda smoke_test=False, demo=False: pytest.fail("not the window")
    )
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--smoke-test", "--version"])
    assert exit_.value.code == 0 and "rocmpanel" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--no-such-option"])
    assert exit_.value.code == 2
