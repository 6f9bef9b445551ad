"""monitor.ranges: the physical bounds of telemetry, checked on samples of any source."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmpanel.monitor.ranges import (
    NAME_MAX,
    PIB,
    POWER_W,
    TEMP_C,
    check_gpu,
    check_process,
    check_processes,
    link_problem,
    vram_totals,
)
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, ProcessSample
from rocmpanel.monitor.sysfs_source import discover_gpus

GIB = 1 << 30
IDENT = GpuIdentity("0000:03:00.0", "card0", "0000:03:00.0", "1002:744c", "Radeon RX 7900 XTX")


def test_range_problems_and_bounds() -> None:
    assert POWER_W.problem(0) is None and POWER_W.problem(2000) is None
    assert POWER_W.problem(2000.5) == "2000.5 W is outside the physical range 0 to 2000 W"
    assert POWER_W.problem(-1) == "-1 W is outside the physical range 0 to 2000 W"
    assert POWER_W.problem(float("nan")) == "nan is not a number"
    assert TEMP_C.problem(float("-inf")) == "-inf is not a number"
    assert POWER_W.problem(1e26) == "1e+26 W is outside the physical range 0 to 2000 W"


def test_a_clean_sample_is_returned_as_it_is() -> None:
    sample = GpuSample(IDENT, False, busy_percent=5.0, power_w=100.0, link="16.0 GT/s x16")
    assert check_gpu(sample) is sample


def test_reasons_are_kept_and_merged_and_the_check_is_idempotent() -> None:
    sample = GpuSample(
        IDENT,
        False,
        power_w=5000.0,
        vram_used_bytes=30 * GIB,
        vram_total_bytes=20 * GIB,
        gtt_used_bytes=-1,
        perf_level="x" * 65,
    )
    once = check_gpu(sample)
    assert (once.power_w, once.vram_used_bytes, once.gtt_used_bytes, once.perf_level) == (
        None,
        None,
        None,
        None,
    )
    assert once.vram_total_bytes == 20 * GIB
    assert dict(once.invalid) == {
        "gtt_used_bytes": "-1 bytes in use is below zero",
        "perf_level": "65 characters is too long for a perf level",
        "power_w": "5000 W is outside the physical range 0 to 2000 W",
        "vram_used_bytes": "30 GiB in use is more than the total of 20 GiB",
    }
    assert check_gpu(once) is once


def test_a_bad_total_is_dropped_and_used_is_then_held_to_one_pib() -> None:
    sample = GpuSample(IDENT, False, vram_total_bytes=2 * PIB, vram_used_bytes=GIB)
    checked = check_gpu(sample)
    assert (checked.vram_total_bytes, checked.vram_used_bytes) == (None, GIB)
    assert dict(checked.invalid) == {"vram_total_bytes": "2.1e+06 GiB is more than 1 PiB"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("16.0 GT/s x16", None),
        ("2.5 GT/s", None),
        ("8 GT/s x1", None),
        ("64.0 GT/s x32", None),
        ("1.0 GT/s x16", "1 GT/s is outside the physical range 2.5 to 128 GT/s"),
        ("16.0 GT/s x0", "0 lanes is outside the physical range 1 to 32 lanes"),
        ("16.0 GB/s x16", "'16.0 GB/s x16' is not a PCIe link speed"),
    ],
)
def test_link_text(text: str, problem: str | None) -> None:
    assert link_problem(text) == problem


def test_names_lose_control_characters_and_are_cut() -> None:
    ident = GpuIdentity("k", None, None, None, "Radeon\x1b[1m\x00 Pro\n")
    assert check_gpu(GpuSample(ident, False)).identity.name == "Radeon[1m Pro"
    long = GpuIdentity("k", None, None, None, "A" * 500)
    name = check_gpu(GpuSample(long, False)).identity.name
    assert len(name) == NAME_MAX and name.endswith("…")
    blank = GpuIdentity("0000:03:00.0", None, None, None, "\x1b\x07")
    assert check_gpu(GpuSample(blank, False)).identity.name == "0000:03:00.0"


def test_processes_are_held_to_their_gpus_vram() -> None:
    gpus = (GpuSample(IDENT, False, vram_total_bytes=24 * GIB),)
    totals = vram_totals(gpus)
    assert totals == {"0000:03:00.0": 24 * GIB}
    rows = (
        ProcessSample(1, "ok", "0000:03:00.0", 2 * GIB, GIB, 50.0, (("gfx", 50.0),)),
        ProcessSample(2, "hog", "0000:03:00.0", 25 * GIB, 2 * PIB, 300.0, (("gfx", 300.0),)),
        ProcessSample(3, "other\x1bgpu", "0000:0c:00.0", 25 * GIB, None, None),
    )
    ok, hog, other = check_processes(rows, totals)
    assert ok is rows[0]
    assert (hog.vram_bytes, hog.gtt_bytes, hog.engine_percent, hog.engines) == (
        None,
        None,
        None,
        (),
    )
    assert dict(hog.invalid) == {
        "engine_percent": "300 % is outside the physical range 0 to 100 %",
        "engines": "an engine's use is outside 0 to 100 %",
        "gtt_bytes": "2.1e+06 GiB in use is more than 1 PiB",
        "vram_bytes": "25 GiB in use is more than the total of 24 GiB",
    }
    # A GPU whose total is unknown: only the 1 PiB bound applies; the name is cleaned.
    assert (other.vram_bytes, other.name, other.invalid) == (25 * GIB, "othergpu", ())
    assert check_process(ProcessSample(4, "\x07", None, None, None, None)).name == "4"


def test_every_shared_snapshot_is_within_range(shared_fixtures: Path, tmp_path: Path) -> None:
    snapshots = sorted(p for p in (shared_fixtures / "sysfs").iterdir() if p.is_dir())
    assert len(snapshots) >= 4
    for index, snapshot in enumerate(snapshots):
        card = tmp_path / "class" / "drm" / f"card{index}"
        card.mkdir(parents=True)
        (card / "device").symlink_to(snapshot, target_is_directory=True)
    for gpu in discover_gpus(tmp_path):
        sample = gpu.read()
        assert check_gpu(sample) is sample, gpu.identity.card
