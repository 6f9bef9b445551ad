"""Render the main window offscreen and save it as a PNG (the README's screenshot).

    python scripts/screenshot.py [--out docs/screenshots/monitor.png] [--tab Monitor]
        [--size 1280x820]
        [--sysfs-root DIR | --device-dir DIR ... | --demo] [--wait-ms 2500]
    python scripts/screenshot.py --demo --all-tabs --out-dir docs/screenshots
    python scripts/screenshot.py --demo --all-tabs --lang zh_CN --out-dir docs/screenshots/zh_CN

``--demo`` shows demo mode (``rocmpanel --demo``: recorded GPUs with a replayed workload,
the Monitor with minutes of history). ``--all-tabs --out-dir DIR`` saves one picture per
tab (``DIR/setup.png``, ``DIR/monitor.png``... ``DIR/multi-gpu.png``: every tab, named
by its English title); the README's pictures are made so. ``--lang zh_CN`` shows the window
in that translation (``en``, the default, in English whatever the system's language);
``--theme light|dark`` picks the palette (default: light, so pictures do not depend on the
desktop they are made on).

``--sysfs-root`` (a /sys-like tree) or ``--device-dir`` (captured amdgpu
``/sys/class/drm/cardN/device`` folders, linked into a temporary /sys-like tree) make the
window show that captured system instead of this machine: the Monitor tab samples it
(ROCMPANEL_SYSFS_ROOT, read by ``rocmpanel/monitor/views/tab.py``) and the shared machine
inventory (``rocmpanel/machine/inventory.py``, which Setup, PyTorch, Chat and Help → About
read) is detected from it, e.g.:

    python scripts/screenshot.py --tab Monitor --wait-ms 8000 \\
        --device-dir ../shared/fixtures/sysfs/rx6900xt \\
        --device-dir ../shared/fixtures/sysfs/rx7900xt

``--tab all`` saves one picture per tab, named after the tab (``monitor-setup.png``...).
Settings and data go to a temporary ROCMPANEL_HOME (removed at the end), so nothing of the
user's is read or left behind. Run it with the panel's own environment (``.venv``), whose
path the pictures show.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _captured_root(device_dirs: list[str]) -> Path:
    """A /sys-like tree whose class/drm/cardN/device are links to ``device_dirs``."""
    root = Path(tempfile.mkdtemp(prefix="rocmpanel-sysfs-"))
    for index, device in enumerate(device_dirs):
        card = root / "class" / "drm" / f"card{index}"
        card.mkdir(parents=True)
        (card / "device").symlink_to(Path(device).resolve(), target_is_directory=True)
    return root


def _out_for(out: Path, title: str, every_tab: bool) -> Path:
    return out.with_name(f"{out.stem}-{title.lower()}{out.suffix}") if every_tab else out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/screenshots/monitor.png")
    parser.add_argument("--tab", default="", help="title of the tab to show, or 'all'")
    parser.add_argument("--size", default="1280x820")
    parser.add_argument("--sysfs-root", default=None)
    parser.add_argument("--device-dir", action="append", default=[], help="captured device dir")
    parser.add_argument("--wait-ms", type=int, default=2500, help="let background work land")
    parser.add_argument("--demo", action="store_true", help="demo mode (rocmpanel --demo)")
    parser.add_argument("--all-tabs", action="store_true", help="one picture per tab")
    parser.add_argument("--out-dir", default=None, help="with --all-tabs: where they go")
    parser.add_argument("--lang", default="en", help="the window's language: en or zh_CN")
    parser.add_argument("--theme", default="light", choices=("light", "dark"))
    args = parser.parse_args()
    from rocmpanel.base.enums import Language

    try:
        args.language = Language(args.lang)
    except ValueError:
        parser.error(
            f"--lang: one of {', '.join(m.value for m in Language if m.value != 'system')}"
        )
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.demo:
        return _demo_shots(args)
    made: list[Path] = []  # temporary folders this run made, removed at its end
    if "ROCMPANEL_HOME" not in os.environ:
        made.append(Path(tempfile.mkdtemp(prefix="rocmpanel-shot-")))
        os.environ["ROCMPANEL_HOME"] = str(made[-1])
    if args.device_dir:
        made.append(_captured_root(args.device_dir))
        args.sysfs_root = str(made[-1])
    if args.sysfs_root:
        os.environ["ROCMPANEL_SYSFS_ROOT"] = str(Path(args.sysfs_root).resolve())
    try:
        return _live_shots(args)
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def _live_shots(args: argparse.Namespace) -> int:

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from rocmpanel.gui.inventory import InventoryHolder
    from rocmpanel.machine.inventory import Inventory, detect_inventory
    from rocmpanel.shell.main_window import MainWindow

    def detector() -> Inventory:
        if args.sysfs_root:
            return detect_inventory(sysfs_root=os.environ["ROCMPANEL_SYSFS_ROOT"])
        return detect_inventory()

    def wait(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    app = QApplication(sys.argv[:1])
    settings = _dressed(app, args)
    window = MainWindow(settings, inventory=InventoryHolder(detector))
    window.save_on_close = False
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    titles = window.tab_titles()
    every_tab = args.tab == "all"
    wanted = titles if every_tab else [args.tab] if args.tab else []
    for title in wanted:
        if title not in titles:
            print(f"no tab {title!r}; tabs are {titles}", file=sys.stderr)
            return 2
    if wanted:
        window.tabs.setCurrentIndex(titles.index(wanted[0]))
    window.show()
    wait(args.wait_ms)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for title in wanted or [window.tabs.tabText(window.tabs.currentIndex())]:
        if title in window.tab_titles():
            window.tabs.setCurrentIndex(window.tab_titles().index(title))
            wait(300 if every_tab else 0)
        path = _out_for(out, title, every_tab)
        if not window.grab().save(str(path)):
            print(f"could not save {path}", file=sys.stderr)
            return 1
        print(path)
    window.close()  # waits for background calls, then the tabs are gone
    app.processEvents()
    return 0


def _demo_shots(args: argparse.Namespace) -> int:
    """Screenshots of demo mode: each tab shown in turn, the Monitor once its replayed
    history is in (deterministic up to the wall-clock time the timeline is read at)."""
    from rocmpanel.machine.demo import DemoSession

    session = DemoSession()
    os.environ.update(session.environ())
    try:
        return _grab_demo(args, session)
    finally:
        session.close()


def _grab_demo(args: argparse.Namespace, session: object) -> int:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from rocmpanel.shell.app import demo_window

    def wait(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    app = QApplication(sys.argv[:1])
    settings = _dressed(app, args)
    window = demo_window(settings, session)  # type: ignore[arg-type]
    window.save_on_close = False
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.show()
    wait(args.wait_ms)
    window.build_all_tabs()
    titles = window.tab_titles()
    wanted = titles if args.all_tabs or args.tab == "all" else [args.tab or titles[0]]
    out_dir = Path(args.out_dir) if args.out_dir else None
    unknown = [title for title in wanted if title not in titles]
    if unknown:
        print(f"no tab {unknown[0]!r}; tabs are {titles}", file=sys.stderr)
        window.close()  # ends the sampler thread before the application goes
        return 2
    for title in wanted:
        window.tabs.setCurrentIndex(titles.index(title))
        if title == "Monitor" and not _monitor_ready(window.tab(title), wait):
            print("the Monitor showed no GPU plots within 30 s", file=sys.stderr)
            return 1
        wait(1500 if title == "Monitor" else 400)  # the plots redraw at 10 fps
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            path = out_dir / f"{title.lower()}.png"
        else:
            path = _out_for(Path(args.out), title, args.all_tabs)
            path.parent.mkdir(parents=True, exist_ok=True)
        if not window.grab().save(str(path)):
            print(f"could not save {path}", file=sys.stderr)
            return 1
        print(path)
    window.close()
    app.processEvents()
    return 0


def _dressed(app: object, args: argparse.Namespace) -> object:
    """The settings of the pictures' window (nothing saved, no first-run guide) with the
    language and palette asked for, installed on ``app`` before any widget exists."""
    from rocmpanel.base.enums import Language, Theme
    from rocmpanel.base.settings import Settings
    from rocmpanel.gui.palette import apply_theme
    from rocmpanel.shell.translations import install_translators

    settings = Settings.load(tell=False)
    settings.writable = False  # a picture run leaves no settings behind
    settings.general.guide_dismissed = True  # the pictures show the tabs, not the guide
    settings.general.theme = Theme(args.theme)
    if args.language is not Language.ENGLISH:
        loaded = install_translators(app, args.language)  # type: ignore[arg-type]
        if loaded is None:
            raise SystemExit(f"the {args.lang} translation could not be loaded (see the log)")
        _chinese_font(app)
    apply_theme(app, settings)  # type: ignore[arg-type]
    return settings


def _chinese_font(app: object) -> None:
    """Qt's offscreen platform does not fall back to another font for characters its
    default lacks: name a Simplified Chinese font after the default one."""
    from PySide6.QtGui import QFontDatabase

    chinese = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    if not chinese:
        print(
            "no Simplified Chinese font is installed: the text shows as boxes "
            "(Debian/Ubuntu: apt install fonts-wqy-microhei)",
            file=sys.stderr,
        )
        return
    font = app.font()  # type: ignore[attr-defined]
    font.setFamilies([font.family(), chinese[0]])
    app.setFont(font)  # type: ignore[attr-defined]


def _monitor_ready(monitor: object, wait: object) -> bool:
    """Wait (up to 30 s, on a busy machine too) until the Monitor has its GPU panels and
    the demo's replayed history: a fixed pause gave an empty Monitor under load."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        panels = getattr(monitor, "panels", None)
        if panels and getattr(monitor, "_held", None) is None and monitor.history is not None:  # type: ignore[attr-defined]
            return True
        wait(200)  # type: ignore[operator]
    return False


if __name__ == "__main__":
    sys.exit(main())
