"""Make resources/demo/recording.json: the demo's GPUs, as facts taken from recorded sysfs.

    python scripts/make_demo_recording.py [--fixtures ../shared/fixtures/sysfs]
        [--out resources/demo/recording.json]

The recorded trees (``rx7900xt``, ``rx6900xt``: ``/sys/class/drm/cardN/device`` folders of
real GPUs, test data of ilya-zlobintsev/amdgpu-sysfs-rs, ``tests/data/`` at commit 8b3d164,
LGPL-3.0-or-later; see SOURCES.md there) are not copied: only the facts the demo needs
(PCI id and slot, memory totals, temperature sensors and their limits, power cap and range,
clock levels, fan limit, PCIe link, VBIOS, idle readings) go into a small JSON file, each
GPU with its ``source``. ``rocmpanel.machine.demo`` rebuilds a sysfs tree from it at demo
start. Facts the recordings lack are added here, each with where it comes from.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from rocmpanel.machine.sysfs import read_int, read_text

UPSTREAM = (
    "https://github.com/ilya-zlobintsev/amdgpu-sysfs-rs/tree/8b3d164/tests/data/{name} "
    "(LGPL-3.0-or-later), recorded on a real GPU"
)

# What the recordings lack, per recording; each value says its source.
EXTRA: dict[str, dict[str, Any]] = {
    "rx7900xt": {
        "name": "Radeon RX 7900 XT",
        # gfx1100 for 1002:744C: resources/pci_ids.yaml (its sources); KFD writes it as 110000.
        "gfx_target_version": 110000,
        # 84 compute units (AMD's specifications, e.g. the table in
        # https://guru3d.com/review/xfx-radeon-rx-7900-xtx-magair-review/page-4), 2 SIMDs each.
        "simd_count": 168,
        # 20 GB GDDR6 (same source); the recording has no mem_info_vram_total.
        "vram_total": 20 * 1024**3,
        "gtt_total": 16786171904,  # assumption: as the RX 6900 XT recording's host
        "vram_note": "VRAM total from AMD's specifications (20 GB): the recording lacks it",
    },
    "rx6900xt": {
        "name": "Radeon RX 6900 XT",
        "gfx_target_version": 100300,  # gfx1030 (resources/pci_ids.yaml for 1002:73BF)
        # 80 compute units (https://www.guru3d.com/articles-pages/amd-radeon-rx-6900-xt-review,1.html)
        "simd_count": 160,
    },
}


def _levels(path: Path) -> list[int]:
    """The MHz of each pp_dpm_* level, in the table's order."""
    text = read_text(path) or ""
    return [int(m) for m in re.findall(r"^\s*\d+:\s*(\d+)Mhz", text, re.MULTILINE)]


def _hwmon(device: Path) -> Path:
    return sorted((device / "hwmon").glob("hwmon*"))[0]


def extract(device: Path, name: str) -> dict[str, Any]:
    """The facts of one recorded device folder."""
    lines = (read_text(device / "uevent") or "").splitlines()
    uevent = dict(line.split("=", 1) for line in lines if "=" in line)
    hwmon = _hwmon(device)
    temps = []
    for index in range(1, 4):
        label = read_text(hwmon / f"temp{index}_label")
        if label is None:
            continue
        temps.append(
            {
                "label": label,
                "idle_mc": read_int(hwmon / f"temp{index}_input"),
                "crit_mc": read_int(hwmon / f"temp{index}_crit"),
                "emergency_mc": read_int(hwmon / f"temp{index}_emergency"),
            }
        )
    extra = dict(EXTRA.get(name, {}))
    gpu: dict[str, Any] = {
        "recording": name,
        "source": UPSTREAM.format(name=name),
        "name": extra.pop("name", name),
        "pci_id": uevent["PCI_ID"].lower(),
        "subsystem_id": uevent.get("PCI_SUBSYS_ID", "").lower(),
        "slot": uevent["PCI_SLOT_NAME"].lower(),
        "vbios": read_text(device / "vbios_version"),
        "link_speed": read_text(device / "current_link_speed"),
        "link_width": read_int(device / "current_link_width"),
        "vram_total": read_int(device / "mem_info_vram_total"),
        "gtt_total": read_int(device / "mem_info_gtt_total"),
        "idle_busy_percent": read_int(device / "gpu_busy_percent"),
        "temps": temps,
        "idle_power_uw": read_int(hwmon / "power1_average"),
        "power_cap_uw": read_int(hwmon / "power1_cap"),
        "power_cap_min_uw": read_int(hwmon / "power1_cap_min"),
        "power_cap_max_uw": read_int(hwmon / "power1_cap_max"),
        "sclk_levels_mhz": _levels(device / "pp_dpm_sclk"),
        "mclk_levels_mhz": _levels(device / "pp_dpm_mclk"),
        "fan_max_rpm": read_int(hwmon / "fan1_max"),
        "fan_min_rpm": read_int(hwmon / "fan1_min"),
        "pwm_max": read_int(hwmon / "pwm1_max") or 255,
        "perf_level": read_text(device / "power_dpm_force_performance_level") or "auto",
    }
    for key, value in extra.items():
        if gpu.get(key) is None or key not in gpu:
            gpu[key] = value
    return gpu


def build(fixtures: Path) -> dict[str, Any]:
    return {
        "about": "Demo GPUs of rocmpanel --demo, made by scripts/make_demo_recording.py from "
        "recorded amdgpu sysfs trees; each GPU names its source.",
        # The verdict needs a ROCm version and the recordings have none: a demo assumption.
        "rocm_version": "7.2.0",
        "rocm_note": "assumed for the demo (the recordings hold no ROCm version)",
        "gpus": [extract(fixtures / name, name) for name in ("rx7900xt", "rx6900xt")],
    }


def main() -> int:
    root = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", default=str(root.parent / "shared" / "fixtures" / "sysfs"))
    parser.add_argument("--out", default=str(root / "resources" / "demo" / "recording.json"))
    args = parser.parse_args()
    fixtures = Path(args.fixtures)
    if not fixtures.is_dir():
        print(f"no recorded trees at {fixtures}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(build(fixtures), indent=1) + "\n", encoding="utf-8")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
