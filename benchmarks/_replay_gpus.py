"""Eight replayed AMD GPUs for benchmarks/responsiveness.py: a /sys- and a /proc-like tree
whose values move, so the Monitor samples and redraws real changes.

``build_trees(root, cards)`` writes ``root/sys`` (``class/drm/cardN/device`` with uevent,
busy, VRAM/GTT, link, and a hwmon with edge/junction/mem temperatures, power, clocks and
fan) and ``root/proc`` (one process per card holding a DRM client, with its fdinfo).
Run as a script, it rewrites the moving values at ``--hz`` until it is killed or
``--seconds`` have passed, and prints how many rewrites it made. It runs in its own
process so that the replay's own work never counts as the panel's.

    python benchmarks/_replay_gpus.py ROOT [--cards 8] [--hz 4] [--seconds 600]
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from pathlib import Path

# A mix of real PCI ids (names and gfx targets come from the panel's own table).
PCI_IDS = ("1002:744C", "1002:73BF", "1002:7550", "1002:74A1")
VRAM_TOTAL = 24 * 1024**3
GTT_TOTAL = 32 * 1024**3
HWMON = "hwmon/hwmon0"
DRM_CLIENT_BASE_PID = 4000


def pci_slot(index: int) -> str:
    return f"0000:{0x03 + 0x10 * index:02x}:00.0"


def _write(path: Path, text: str) -> None:
    """Replace the file at once (temp file + rename), so a reader never sees half a value."""
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text + "\n", encoding="ascii")
    os.replace(temp, path)


def _moving_values(index: int, t: float) -> dict[str, str]:
    """Device-relative file → value at time ``t``: a slow wave per card, each out of phase."""
    phase = t / 7.0 + index * 0.8
    load = 0.5 + 0.5 * math.sin(phase)
    busy = round(100 * load)
    vram = int(VRAM_TOTAL * (0.2 + 0.6 * (0.5 + 0.5 * math.sin(phase / 3))))
    return {
        "gpu_busy_percent": str(busy),
        "mem_busy_percent": str(round(busy * 0.6)),
        "mem_info_vram_used": str(vram),
        "mem_info_vis_vram_used": str(min(vram, 256 * 1024**2)),
        "mem_info_gtt_used": str(int(GTT_TOTAL * 0.05 * (1 + load))),
        f"{HWMON}/temp1_input": str(int(1000 * (45 + 30 * load))),
        f"{HWMON}/temp2_input": str(int(1000 * (50 + 40 * load))),
        f"{HWMON}/temp3_input": str(int(1000 * (48 + 35 * load))),
        f"{HWMON}/power1_average": str(int(1e6 * (30 + 250 * load))),
        f"{HWMON}/freq1_input": str(int(1e6 * (500 + 2000 * load))),
        f"{HWMON}/fan1_input": str(round(800 + 2200 * load)),
        f"{HWMON}/pwm1": str(round(60 + 190 * load)),
    }


def _fdinfo(index: int, t: float) -> str:
    load = 0.5 + 0.5 * math.sin(t / 7.0 + index * 0.8)
    engine_ns = int(t * 1e9 * 0.5) + int(load * 1e8)  # grows: the panel turns it into %
    return (
        "pos:\t0\nflags:\t02100002\nmnt_id:\t24\ndrm-driver:\tamdgpu\n"
        f"drm-pdev:\t{pci_slot(index)}\ndrm-client-id:\t{100 + index}\n"
        f"drm-engine-gfx:\t{engine_ns} ns\ndrm-engine-compute:\t0 ns\n"
        f"drm-memory-vram:\t{int(2 * 1024**2 * (1 + load))} KiB\n"
        "drm-memory-gtt:\t4096 KiB\ndrm-memory-cpu:\t0 KiB"
    )


def build_trees(root: Path, cards: int = 8) -> tuple[Path, Path]:
    """Write the trees under ``root``; returns (sysfs root, proc root)."""
    sysfs, proc = root / "sys", root / "proc"
    for index in range(cards):
        device = sysfs / "class" / "drm" / f"card{index}" / "device"
        (device / HWMON).mkdir(parents=True)
        (device / "power").mkdir()
        fixed = {
            "uevent": (
                f"DRIVER=amdgpu\nPCI_ID={PCI_IDS[index % len(PCI_IDS)]}\n"
                f"PCI_SLOT_NAME={pci_slot(index)}"
            ),
            "power/runtime_status": "active",
            "mem_info_vram_total": str(VRAM_TOTAL),
            "mem_info_vis_vram_total": str(256 * 1024**2),
            "mem_info_gtt_total": str(GTT_TOTAL),
            "current_link_speed": "16.0 GT/s PCIe",
            "current_link_width": "16",
            "power_dpm_force_performance_level": "auto",
            f"{HWMON}/name": "amdgpu",
            f"{HWMON}/temp1_label": "edge",
            f"{HWMON}/temp1_crit": "100000",
            f"{HWMON}/temp2_label": "junction",
            f"{HWMON}/temp2_crit": "110000",
            f"{HWMON}/temp3_label": "mem",
            f"{HWMON}/temp3_crit": "105000",
            f"{HWMON}/power1_cap": "300000000",
            f"{HWMON}/freq1_label": "sclk",
            f"{HWMON}/freq2_label": "mclk",
            f"{HWMON}/freq2_input": "1250000000",
            f"{HWMON}/pwm1_max": "255",
        }
        for name, text in {**fixed, **_moving_values(index, 0.0)}.items():
            _write(device / name, text)
        pid_dir = proc / str(DRM_CLIENT_BASE_PID + index)
        (pid_dir / "fd").mkdir(parents=True)
        (pid_dir / "fdinfo").mkdir()
        (pid_dir / "fd" / "5").symlink_to(f"/dev/dri/renderD{128 + index}")
        _write(pid_dir / "comm", f"train-gpu{index}")
        _write(pid_dir / "fdinfo" / "5", _fdinfo(index, 0.0))
    return sysfs, proc


def replay_once(root: Path, cards: int, t: float) -> None:
    """Rewrite every moving value of every card for time ``t`` (seconds since the start)."""
    for index in range(cards):
        device = root / "sys" / "class" / "drm" / f"card{index}" / "device"
        for name, text in _moving_values(index, t).items():
            _write(device / name, text)
        fdinfo = root / "proc" / str(DRM_CLIENT_BASE_PID + index) / "fdinfo" / "5"
        _write(fdinfo, _fdinfo(index, t))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--cards", type=int, default=8)
    parser.add_argument("--hz", type=float, default=4.0)
    parser.add_argument("--seconds", type=float, default=600.0)
    args = parser.parse_args()
    rewrites = 0
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    started = time.monotonic()
    period = 1.0 / args.hz
    next_at = started
    while not stopping and time.monotonic() - started < args.seconds:
        replay_once(args.root, args.cards, time.monotonic() - started)
        rewrites += 1
        next_at += period
        time.sleep(max(0.0, next_at - time.monotonic()))
    print(rewrites, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
