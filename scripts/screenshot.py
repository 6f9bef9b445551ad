"""Render the main window offscreen and save it as a PNG (the README's screenshot).

    python scripts/screenshot.py [--out docs/screenshot.png] [--tab Monitor] [--size 1280x820]
        [--sysfs-root DIR | --device-dir DIR ...] [--wait-ms 2500]

``--sysfs-root`` (a /sys-like tree) or ``--device-dir`` (captured amdgpu
``/sys/class/drm/cardN/device`` folders, linked into a temporary /sys-like tree) make the
Monitor tab show that captured system instead of this machine (ROCMPANEL_SYSFS_ROOT).
The README's screenshot is made with two recorded trees (RX 6900 XT, RX 7900 XT):

    python scripts/screenshot.py --tab Monitor --wait-ms 8000 \\
        --device-dir ../shared/fixtures/sysfs/rx6900xt \\
        --device-dir ../shared/fixtures/sysfs/rx7900xt
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/screenshot.png")
    parser.add_argument("--tab", default="", help="title of the tab to show")
    parser.add_argument("--size", default="1280x820")
    parser.add_argument("--sysfs-root", default=None)
    parser.add_argument("--device-dir", action="append", default=[], help="captured device dir")
    parser.add_argument("--wait-ms", type=int, default=2500, help="let background work land")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("ROCMPANEL_HOME", tempfile.mkdtemp(prefix="rocmpanel-shot-"))
    if args.device_dir:
        root = Path(tempfile.mkdtemp(prefix="rocmpanel-sysfs-"))
        for index, device in enumerate(args.device_dir):
            card = root / "class" / "drm" / f"card{index}"
            card.mkdir(parents=True)
            (card / "device").symlink_to(Path(device).resolve(), target_is_directory=True)
        args.sysfs_root = str(root)
    if args.sysfs_root:
        os.environ["ROCMPANEL_SYSFS_ROOT"] = str(Path(args.sysfs_root).resolve())

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from rocmpanel.shell.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    window = MainWindow()
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    if args.tab:
        titles = window.tab_titles()
        if args.tab not in titles:
            print(f"no tab {args.tab!r}; tabs are {titles}", file=sys.stderr)
            return 2
        window.tabs.setCurrentIndex(titles.index(args.tab))
    window.show()
    loop = QEventLoop()
    QTimer.singleShot(args.wait_ms, loop.quit)
    loop.exec()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(out)):
        print(f"could not save {out}", file=sys.stderr)
        return 1
    print(out)
    window.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
