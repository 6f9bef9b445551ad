"""Every real amdgpu sysfs snapshot in ../shared/fixtures/sysfs yields the values its
SOURCES.md lists, read through a /sys-like tree whose class/drm/cardN/device are symlinks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocmpanel.machine.sysfs import read_text
from rocmpanel.monitor.sample import GpuSample
from rocmpanel.monitor.sysfs_source import discover_gpus

# Listed in SOURCES.md but not telemetry the panel shows (firmware ids, voltages, fan
# limits and the hwmon device's own runtime PM, which says nothing about the GPU).
NOT_TELEMETRY = (
    "vbios_version",
    "in0_input",
    "fan1_max",
    "pwm1_enable",
    "power1_cap_max",
    "hwmon dir",
    "hwmon power/runtime_status",
)


def parse_sources(text: str) -> dict[str, list[str]]:
    """SOURCES.md sections: "### name" followed by "* ..." lines."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("### "):
            current = sections.setdefault(line[4:].strip(), [])
        elif current is not None and line.lstrip().startswith("*"):
            current.append(line.lstrip()[1:].strip())
    return sections


def build_tree(root: Path, snapshots: dict[str, Path]) -> Path:
    """A /sys-like tree: class/drm/cardN/device -> a snapshot (as a symlink)."""
    drm = root / "class" / "drm"
    for index, source in enumerate(snapshots.values()):
        card = drm / f"card{index}"
        card.mkdir(parents=True)
        (card / "device").symlink_to(source, target_is_directory=True)
    # Connector entries sit next to the cards in real /sys; they must be ignored.
    (drm / "card0-DP-1").mkdir()
    return root


def check_line(line: str, sample: GpuSample, snapshot: Path) -> bool:
    """Assert one SOURCES.md line against the sample; False when the line is not telemetry."""
    ident = sample.identity
    if m := re.fullmatch(r"PCI_ID (\S+), slot (\S+)", line):
        assert ident.pci_id == m[1].lower()
        assert ident.pci_slot == m[2]
        return True
    if m := re.fullmatch(r"(\w+) = '(.*)'", line):
        key, value = m[1], m[2]
        fields = {
            "gpu_busy_percent": ("busy_percent", float(value) if value.isdigit() else None),
            "mem_busy_percent": ("mem_busy_percent", float(value) if value.isdigit() else None),
            "mem_info_vram_total": ("vram_total_bytes", int(value) if value.isdigit() else None),
            "mem_info_vram_used": ("vram_used_bytes", int(value) if value.isdigit() else None),
            "mem_info_gtt_total": ("gtt_total_bytes", int(value) if value.isdigit() else None),
            "mem_info_gtt_used": ("gtt_used_bytes", int(value) if value.isdigit() else None),
            "power_dpm_force_performance_level": ("perf_level", value),
        }
        if key in fields:
            attr, expected = fields[key]
            assert getattr(sample, attr) == expected, (key, getattr(sample, attr))
            return True
        if key == "current_link_speed":
            assert sample.link is not None
            assert sample.link.startswith(value.removesuffix(" PCIe"))
            return True
        if key == "current_link_width":
            assert sample.link is not None
            assert sample.link.endswith(f" x{value}")
            return True
        if key in NOT_TELEMETRY:
            return False
        raise AssertionError(f"unhandled SOURCES.md line {line!r}")
    if m := re.fullmatch(r"(pp_dpm_[sm]clk) current level = '\d+: (\d+)Mhz \*'", line):
        # hwmon freq*_input wins when present; the table's * level must parse all the same.
        from rocmpanel.monitor.sysfs_source import _dpm_current_mhz

        assert _dpm_current_mhz(str(snapshot / m[1])) == float(m[2])
        return True
    if m := re.fullmatch(r"temp\d label='(\w+)' input=(\d+) m°C crit=(\d+)", line):
        assert sample.temp_c(m[1]) == int(m[2]) / 1000
        assert sample.crit_c(m[1]) == int(m[3]) / 1000
        return True
    if m := re.fullmatch(r"(\w+) = (\d+)", line):
        key, number = m[1], int(m[2])
        scaled = {
            "power1_average": ("power_w", number / 1e6),
            "power1_cap": ("power_cap_w", number / 1e6),
            "freq1_input": ("sclk_mhz", number / 1e6),
            "freq2_input": ("mclk_mhz", number / 1e6),
            "fan1_input": ("fan_rpm", number),
            "pwm1": ("fan_percent", round(100 * number / 255, 1)),
        }
        if key in scaled:
            attr, expected = scaled[key]
            assert getattr(sample, attr) == pytest.approx(expected), key
            return True
        if key in NOT_TELEMETRY:
            return False
        raise AssertionError(f"unhandled SOURCES.md line {line!r}")
    if m := re.fullmatch(r"hwmon dir (hwmon\d+)", line):
        return False
    if line.startswith("hwmon power/runtime_status"):
        return False
    if m := re.fullmatch(r"power/runtime_status = (\w+)", line):
        assert sample.asleep is (m[1] == "suspended")
        return True
    if line.startswith("absent: "):
        absent = [a.strip() for a in line.removeprefix("absent: ").split(",")]
        for name in absent:
            assert not (snapshot / name).exists()
            if name == "mem_info_vram_total":
                assert sample.vram_total_bytes is None
            if name == "mem_info_vram_used":
                assert sample.vram_used_bytes is None
            if name == "product_name":
                assert ident.name.startswith("AMD Radeon RX")  # from resources/pci_ids.yaml
        return True
    raise AssertionError(f"unhandled SOURCES.md line {line!r}")


def test_every_snapshot_yields_its_listed_values(shared_fixtures: Path, tmp_path: Path) -> None:
    sysfs = shared_fixtures / "sysfs"
    sections = parse_sources((sysfs / "SOURCES.md").read_text(encoding="utf-8"))
    snapshots = {name: sysfs / name for name in sections}
    assert len(snapshots) >= 4 and all(p.is_dir() for p in snapshots.values())
    gpus = discover_gpus(build_tree(tmp_path / "sys", snapshots))
    assert [g.identity.card for g in gpus] == [f"card{i}" for i in range(len(snapshots))]
    checked = 0
    for gpu, (name, lines) in zip(gpus, sections.items(), strict=True):
        sample = gpu.read()
        assert not sample.asleep, name
        for line in lines:
            checked += check_line(line, sample, snapshots[name])
    assert checked >= 60  # the parser really matched the document


def test_issue_json_shape_for_rx7900xt(shared_fixtures: Path, tmp_path: Path) -> None:
    tree = build_tree(tmp_path / "sys", {"rx7900xt": shared_fixtures / "sysfs" / "rx7900xt"})
    (gpu,) = discover_gpus(tree)
    doc = gpu.read().to_json()
    expected = {
        "pci_slot": "0000:03:00.0",
        "pci_id": "1002:744c",
        "asleep": False,
        "busy_percent": 3,
        "vram_used_bytes": None,
        "vram_total_bytes": None,
        "gtt_used_bytes": None,
        "temps_c": {"edge": 53.0, "junction": 61.0, "mem": 68.0},
        "temp_crit_c": {"edge": 100.0, "junction": 110.0, "mem": 108.0},
        "power_w": 68.0,
        "power_cap_w": 290.0,
        "sclk_mhz": 31,
        "mclk_mhz": 1249,
        "fan_rpm": 0,
        "link": "16.0 GT/s x16",
    }
    assert {k: doc[k] for k in expected} == expected
    assert list(doc)[: len(expected)] == list(expected)


def test_nul_padded_snapshot_reads_cleanly(shared_fixtures: Path) -> None:
    padded = shared_fixtures / "sysfs" / "rx6900xt" / "gpu_busy_percent"
    assert padded.stat().st_size == 4096
    assert read_text(padded) == "3"
