"""QApplication start-up: logging, the crash handler, the main window, the smoke test."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rocmpanel import __version__
from rocmpanel.base import paths

if TYPE_CHECKING:  # Qt is imported when the window opens, not for the headless commands
    from PySide6.QtWidgets import QApplication

    from rocmpanel.base.settings import Settings
    from rocmpanel.machine.demo import DemoSession
    from rocmpanel.shell.main_window import MainWindow

log = logging.getLogger("rocmpanel")
_T0 = time.perf_counter()


# Messages the offscreen platform plugin prints for features it lacks; not our faults.
BENIGN_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)


def process_age_ms() -> float:
    """Milliseconds since this process started, interpreter start-up included."""
    try:  # Linux: both figures from the same clock, 10 ms resolution
        import os

        with open("/proc/self/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
        return max(0.0, (uptime - started) * 1000.0)
    except (OSError, ValueError, IndexError, AttributeError):
        return (time.perf_counter() - _T0) * 1000.0


LOG_MAX_BYTES = 2_000_000
LOG_BACKUPS = 3


def _log_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if getattr(h, "_rocmpanel", False)]


def _own(handler: logging.Handler, fmt: logging.Formatter | None) -> logging.Handler:
    handler.setFormatter(fmt)
    handler._rocmpanel = True  # type: ignore[attr-defined]
    return handler


def setup_logging(*, rotating: bool = True) -> None:
    """Log to a file under the data dir (stderr when it cannot be opened).

    The file rotates (2 MB, 3 backups). ``rotating=False`` (the window's start) opens it
    without rotation for now, because ``logging.handlers`` (sockets, pickle, queues) costs
    ~10 ms before the first paint; :func:`rotate_log` switches to rotation afterwards.
    """
    root = logging.getLogger()
    if _log_handlers():
        if rotating:
            rotate_log()
        return
    root.setLevel(logging.INFO)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    path = paths.log_dir() / "rocmpanel.log"
    try:
        paths.log_dir().mkdir(parents=True, exist_ok=True)
        if rotating:
            from logging.handlers import RotatingFileHandler

            handler: logging.Handler = RotatingFileHandler(
                path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
            )
        else:
            handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    root.addHandler(_own(handler, fmt))


def rotate_log() -> None:
    """Replace a plain log file handler of :func:`setup_logging` with a rotating one on
    the same file (nothing is lost: both append)."""
    from logging.handlers import RotatingFileHandler

    root = logging.getLogger()
    for old in _log_handlers():
        if type(old) is not logging.FileHandler:
            continue  # rotating already, or stderr
        try:
            new = RotatingFileHandler(
                old.baseFilename, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
            )
        except OSError:
            continue  # keep logging to the file as it is
        root.addHandler(_own(new, old.formatter))
        root.removeHandler(old)
        old.close()


def _no_display() -> bool:
    import os

    return (
        sys.platform.startswith("linux")
        and not os.environ.get("QT_QPA_PLATFORM")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
    )


def missing_xcb_library() -> str | None:
    """What keeps Qt's X11 plugin from loading (e.g. "libxcb-cursor.so.0"), or None.

    Qt aborts the whole process when no platform plugin loads, which on fresh Ubuntu and
    Debian desktops is usually a missing xcb library (libxcb-cursor0 above all). Loading
    the plugin first, as Qt would, turns that into a message that names the fix.
    """
    import importlib.util
    import os

    platform = os.environ.get("QT_QPA_PLATFORM", "")
    x11 = platform.startswith("xcb") or (
        not platform and os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")
    )
    if not sys.platform.startswith("linux") or not x11:
        return None
    spec = importlib.util.find_spec("PySide6")
    if spec is None:
        return None
    import ctypes
    import re

    for location in spec.submodule_search_locations or ():
        plugin = os.path.join(location, "Qt", "plugins", "platforms", "libqxcb.so")
        if os.path.exists(plugin):
            try:
                ctypes.CDLL(plugin, mode=os.RTLD_LAZY)
            except OSError as exc:
                found = re.search(r"(lib[\w.+-]+\.so[\w.]*): cannot open", str(exc))
                return found.group(1) if found else str(exc)
    return None


# The taskbar groups windows by AppUserModelID; without one, rocmpanel-gui's windows fall
# under pythonw.exe's button and icon. Form: CompanyName.ProductName[.SubProduct], at most
# 128 characters, no spaces; no version, so pins survive updates. It must be set before any
# window shows: https://learn.microsoft.com/en-us/windows/win32/shell/appids and
# https://learn.microsoft.com/en-us/windows/win32/api/shobjidl_core/nf-shobjidl_core-setcurrentprocessexplicitappusermodelid
APP_USER_MODEL_ID = "rocmpanel.rocmpanel.Panel"


def _real_set_app_id() -> Callable[[str], int]:
    """shell32's SetCurrentProcessExplicitAppUserModelID (Windows only): HRESULT (PCWSTR)."""
    import ctypes

    # WinDLL exists only on Windows (hence getattr); c_long keeps the HRESULT a number
    # (ctypes.HRESULT would raise on failure instead of returning it).
    shell32: Any = getattr(ctypes, "WinDLL")("shell32")  # noqa: B009
    function = shell32.SetCurrentProcessExplicitAppUserModelID
    function.argtypes = [ctypes.c_wchar_p]
    function.restype = ctypes.c_long
    return function


def set_app_user_model_id(
    platform: str = sys.platform,
    set_app_id: Callable[[str], int] | None = None,
    app_id: str = APP_USER_MODEL_ID,
) -> bool:
    """Give this process rocmpanel's AppUserModelID (Windows; elsewhere nothing happens), so
    the taskbar shows rocmpanel's own button and icon. A failure is logged, never raised: the
    window works without it. ``set_app_id``: shell32's function (a fake in tests)."""
    if platform != "win32":
        return False
    try:
        result = int((set_app_id or _real_set_app_id())(app_id))
    except Exception as exc:  # a missing shell32 or ctypes: the default grouping stays
        log.warning("The taskbar id %s could not be set: %s", app_id, exc)
        return False
    if result != 0:  # S_OK is 0; HRESULTs are shown as unsigned hex, as Windows documents them
        log.warning(
            "The taskbar id %s could not be set: HRESULT 0x%08X", app_id, result & 0xFFFFFFFF
        )
        return False
    return True


def run_gui(smoke_test: bool = False, demo: bool = False) -> int:
    """Open the window; with ``smoke_test``, exit after the first paint with a JSON line;
    with ``demo``, on the demo's recorded GPUs, in a temporary home removed at exit."""
    if not demo:
        return _run_gui(smoke_test)
    import os

    from rocmpanel.machine.demo import DemoSession

    try:
        session = DemoSession()
    except (OSError, ValueError) as exc:  # load_recording says what is damaged
        print(
            f"rocmpanel --demo: the demo's recording could not be loaded ({exc}).", file=sys.stderr
        )
        return 1
    saved = {name: os.environ.get(name) for name in session.environ()}
    os.environ.update(session.environ())  # the panel and its jobs use the demo's folders
    try:
        return _run_gui(smoke_test, session)
    finally:
        session.close()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_gui(smoke_test: bool, session: DemoSession | None = None) -> int:
    import os

    if _no_display():
        if not smoke_test:
            print(
                "rocmpanel: no display found (DISPLAY and WAYLAND_DISPLAY are unset). "
                "Start it from a desktop session, or use the headless commands: "
                "rocmpanel --help",
                file=sys.stderr,
            )
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    missing = missing_xcb_library()
    if missing is not None:
        print(
            f"rocmpanel: Qt's X11 support needs {missing}, which is not installed.\n"
            "Install the X11 libraries Qt needs and start rocmpanel again:\n"
            "  Debian/Ubuntu: sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-image0 "
            "libxcb-keysyms1 libxcb-render-util0 libxkbcommon-x11-0\n"
            "  Fedora: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-image "
            "xcb-util-keysyms xcb-util-renderutil libxkbcommon-x11\n"
            "The headless commands work without them: rocmpanel --help",
            file=sys.stderr,
        )
        return 2
    from rocmpanel.shell import heap

    heap.pause()  # until start-up is done (MainWindow settles the heap then)
    setup_logging(rotating=False)  # rotate_log() follows the first paint
    # Read before Qt is imported: PySide's import hook reads the source of every module
    # imported after it (to look for its __feature__ switches), and these need none.
    from rocmpanel.base.settings import Settings

    settings = Settings.load(tell=False)  # the window shows what was wrong, in a dialog
    if smoke_test:  # a check of the build: the user's files stay as they are
        from rocmpanel.base import sqlite

        settings.writable = False
        sqlite.set_read_only()  # a damaged database is reported, not moved aside or remade
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    qt_problems: list[str] = []

    def on_qt_message(mode: QtMsgType, _context: object, message: str) -> None:
        if mode in (QtMsgType.QtDebugMsg, QtMsgType.QtInfoMsg) or message in BENIGN_QT_MESSAGES:
            return
        qt_problems.append(message)
        log.warning("Qt: %s", message)
        if smoke_test:
            print(f"Qt: {message}", file=sys.stderr)

    qInstallMessageHandler(on_qt_message)
    set_app_user_model_id()  # before the first window
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("rocmpanel")
    app.setApplicationDisplayName("rocmpanel")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("rocmpanel")
    app.setDesktopFileName("rocmpanel")
    from rocmpanel.shell.translations import install_translators

    install_translators(app, settings.general.language)  # before any widget is made
    from rocmpanel.gui.palette import apply_theme

    apply_theme(app, settings)  # the light or dark palette, before any widget is made

    from rocmpanel.shell.crash_dialog import install_excepthook
    from rocmpanel.shell.main_window import MainWindow

    reporter = install_excepthook()
    window = MainWindow(settings) if session is None else demo_window(settings, session)
    if smoke_test:
        window.save_on_close = False
    window.first_painted.connect(lambda: after_first_paint(app))
    reporter.set_parent_window(window)
    from rocmpanel.jobs.runner import watch_exit_signals

    watch_exit_signals(app, window.close)  # SIGTERM/SIGHUP end the jobs, then the window
    log.info("rocmpanel %s started", __version__)

    if smoke_test:
        return _run_smoke_test(app, window, qt_problems)
    window.show()
    return app.exec()


def demo_window(settings: Settings, session: DemoSession) -> MainWindow:
    """The main window on the demo's tree: its inventory is the recording's, detected
    from the tree with the recording's ROCm version."""
    from functools import partial

    from rocmpanel.gui.inventory import InventoryHolder
    from rocmpanel.machine.demo import detect_demo_inventory
    from rocmpanel.shell.main_window import MainWindow

    detector = partial(detect_demo_inventory, session.sysfs_root, session.recording)
    return MainWindow(settings, inventory=InventoryHolder(detector), demo=True)


def after_first_paint(app: QApplication) -> None:
    """What the first frame need not wait for: the icon (importing it, reading the SVG,
    loading Qt's SVG plugin) and the log's rotation (``logging.handlers``)."""
    from rocmpanel.gui.icons import app_icon

    app.setWindowIcon(app_icon())
    rotate_log()


def _run_smoke_test(app: QApplication, window: MainWindow, qt_problems: list[str]) -> int:
    from PySide6.QtCore import QEvent, QObject, QTimer

    state: dict[str, float | None] = {"paint_ms": None}

    class PaintWatcher(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and state["paint_ms"] is None:
                state["paint_ms"] = process_age_ms()
                # Let everything queued behind the first paint run, then report.
                QTimer.singleShot(0, finish)
            return False

    def finish() -> None:
        window.build_all_tabs()  # so the tab list is complete and every tab is exercised
        report = {
            "first_paint_ms": round(state["paint_ms"] or 0.0, 1),
            "tabs": window.tab_titles(),
            "torch_imported": "torch" in sys.modules,
        }
        print(json.dumps(report), flush=True)
        window.close()
        failed = qt_problems or window.tab_failures or report["torch_imported"]
        for problem in window.tab_failures:
            print(problem, file=sys.stderr)
        app.exit(1 if failed else 0)

    watcher = PaintWatcher()
    app.installEventFilter(watcher)
    window.show()
    QTimer.singleShot(30_000, lambda: app.exit(3))  # never hang a CI run
    code = app.exec()
    app.removeEventFilter(watcher)
    if qt_problems:
        print(f"rocmpanel --smoke-test: {len(qt_problems)} Qt warning(s)", file=sys.stderr)
    return int(code)
