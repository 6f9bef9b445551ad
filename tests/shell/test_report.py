"""The health report's gathering: a recorded machine, the stores, caps, telemetry peaks."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from types import ModuleType

import pytest

from rocmpanel.base import paths
from rocmpanel.base.enums import CheckStatus
from rocmpanel.jobs.workload import RECORD, envs_dir
from rocmpanel.monitor.history import TelemetryHistory
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, HostSample, Sample
from rocmpanel.pytorch.validation_run import CheckResult, ValidationRun
from rocmpanel.pytorch.validation_store import ValidationStore
from rocmpanel.shell import report as report_mod
from rocmpanel.shell.report import (
    MAX_ENV_VARS,
    MAX_PATH_ENTRIES,
    NO_TELEMETRY,
    SECRET_LEFT_OUT,
    env_lines,
    gather_report,
)
from rocmpanel.shell.report_peaks import peaks_from_history, peaks_from_samples
from rocmpanel.shell.report_render import to_markdown


@pytest.fixture
def tree(tmp_path: Path, kfd: ModuleType) -> Path:
    """A /sys-like tree with one RX 7900 XTX."""
    return kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX)


def _env(tree: Path, **extra: str) -> dict[str, str]:
    return {"ROCMPANEL_SYSFS_ROOT": str(tree), **extra}


def test_a_recorded_tree_gives_gpus_verdicts_and_the_checklist(tree: Path) -> None:
    report = gather_report(environ=_env(tree, HSA_OVERRIDE_GFX_VERSION="11.0.0"))
    assert report.mode == "recorded"
    (gpu,) = report.gpus
    assert gpu.gfx == "gfx1100" and gpu.pci_id == "1002:744c" and gpu.vram == "24.0 GiB"
    assert gpu.verdict and gpu.reason
    titles = [c.title for c in report.checks]
    assert "HSA_OVERRIDE_GFX_VERSION" in titles and "AMD GPU" in titles
    assert ("HSA_OVERRIDE_GFX_VERSION", "11.0.0") in [(e.name, e.value) for e in report.env]
    text = to_markdown(report)
    assert "Recorded /sys tree" in text and "gfx1100" in text
    assert report.problems == ()


def test_demo_mode_says_demo(tree: Path) -> None:
    report = gather_report(environ=_env(tree), demo=True)
    assert report.demo
    assert "**DEMO:" in to_markdown(report)
    assert "DEMO" not in to_markdown(gather_report(environ=_env(tree)))


def test_no_telemetry_is_said() -> None:
    report = gather_report(environ={}, inventory=None, detect=lambda: _no_gpu())
    assert report.telemetry is None and report.telemetry_note == NO_TELEMETRY
    assert "No telemetry recorded" in to_markdown(report)


def _no_gpu():  # type: ignore[no-untyped-def]
    from rocmpanel.machine.gpu_model import SystemInfo
    from rocmpanel.machine.inventory import Inventory

    return Inventory(SystemInfo(os="linux"))


def test_a_detection_that_raises_is_said_and_the_rest_stands() -> None:
    def broken():  # type: ignore[no-untyped-def]
        raise OSError("rocminfo exploded")

    report = gather_report(environ={"ROCM_PATH": "/opt/rocm"}, detect=broken)
    assert any("GPUs: could not read: rocminfo exploded" in p for p in report.problems)
    assert [e.name for e in report.env] == ["ROCM_PATH"]
    assert "Not in this report" in to_markdown(report)


def test_env_lines_pick_rocm_and_path_like_variables_and_drop_secrets() -> None:
    environ = {
        "PATH": ":".join(f"/p{i}" for i in range(20)),
        "ROCR_VISIBLE_DEVICES": "0",
        "HIP_API_KEY": "abcdef123456",
        "HF_TOKEN": "hf_secret_value",
        "EDITOR": "vim",
        "ROCMPANEL_HOME": "/tmp/x",
    }
    lines = {e.name: e for e in env_lines(environ, lambda name: name == "ROCR_VISIBLE_DEVICES")}
    assert set(lines) == {"PATH", "ROCR_VISIBLE_DEVICES", "HIP_API_KEY", "HF_TOKEN"}
    assert lines["HIP_API_KEY"].value == "" and lines["HIP_API_KEY"].note == SECRET_LEFT_OUT
    assert lines["HF_TOKEN"].value == ""
    shown = lines["PATH"].value.split(":")
    assert len(shown) == MAX_PATH_ENTRIES and shown[0] == "/p0"
    assert lines["PATH"].note == f"shortened: first {MAX_PATH_ENTRIES} of 20 entries"


def test_long_lists_are_capped_and_counted(tree: Path) -> None:
    many = {f"HIP_X{i:03d}": "1" for i in range(MAX_ENV_VARS + 7)}
    report = gather_report(environ=_env(tree, **many))
    assert len(report.env) == MAX_ENV_VARS
    assert "7 more variables left out" in report.left_out


def _run(**kw: object) -> ValidationRun:
    checks = tuple(
        CheckResult(f"c{i}", f"check {i}", CheckStatus.PASS, figure=f"{i} GB/s") for i in range(3)
    )
    fields = {
        "created_at": time.time(),
        "python": "/home/alice/envs/t/bin/python",
        "checks": checks,
    }
    fields.update(kw)
    return ValidationRun(**fields)  # type: ignore[arg-type]


def test_the_last_validation_run_and_the_environments_are_listed(tree: Path) -> None:
    store = ValidationStore()
    store.save(_run(torch_version="2.0"))
    store.save(_run(torch_version="2.9.1", env_name="rocm7", build="rocm"))
    folder = envs_dir() / "rocm7"
    folder.mkdir(parents=True)
    (folder / RECORD).write_text(
        json.dumps({"name": "rocm7", "created_at": time.time(), "torch_version": "2.9.1"})
    )
    broken = envs_dir() / "old"
    broken.mkdir()
    (broken / RECORD).write_text("{not json")
    report = gather_report(environ=_env(tree), workload_python=str(folder / "bin" / "python"))
    assert report.validation is not None
    assert any("2.9.1" in fact for fact in report.validation.facts)  # the newest run
    assert [c[0] for c in report.validation.checks] == ["check 0", "check 1", "check 2"]
    names = {e.name: e for e in report.environments}
    assert names["rocm7"].torch == "2.9.1" and names["rocm7"].active
    assert names["old"].problem
    text = to_markdown(report)
    assert "rocm7 (active)" in text and "damaged:" in text


def test_a_damaged_validation_store_is_said_not_raised(tree: Path) -> None:
    path = paths.validation_database_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    report = gather_report(environ=_env(tree))
    text = to_markdown(report)
    # The store moves a damaged file aside and starts afresh: the report says so.
    assert report.validation is not None and report.validation.title == "none saved"
    assert "is not a database" in report.validation.facts[0]
    assert "moved to validation.sqlite3.corrupt-" in text and "Traceback" not in text


def test_a_validation_store_that_raises_is_one_problem(tree: Path, monkeypatch) -> None:
    def broken() -> None:
        raise sqlite3.DatabaseError("file is not a database")

    monkeypatch.setattr(report_mod, "validation_summary", broken)
    report = gather_report(environ=_env(tree))
    assert report.problems == ("Validation history: could not read: file is not a database",)
    assert report.gpus  # the rest stands


def test_stores_are_not_read_when_told(tree: Path, monkeypatch) -> None:
    monkeypatch.setattr(report_mod, "validation_summary", lambda: pytest.fail("read"))
    report = gather_report(environ=_env(tree), read_stores=False)
    assert report.validation is None and report.environments == ()


def _sample(t: float, busy: float, temp: float, key: str = "0000:03:00.0") -> Sample:
    ident = GpuIdentity(key, "card0", key, "1002:744c", "RX 7900 XTX", "gfx1100")
    gpu = GpuSample(
        ident, False, busy_percent=busy, vram_used_bytes=int(busy) << 30, temp_edge_c=temp
    )
    host = HostSample(busy / 2, (), 8 << 30, 16 << 30, None, None, None)
    return Sample(t, (gpu,), host)


def test_peaks_are_the_maxima_of_the_window() -> None:
    now = 10_000.0
    history = TelemetryHistory(full_capacity=1000, coarse_capacity=100)
    history.add(_sample(now - 7200, 100.0, 99.0))  # older than the hour: not counted
    for i, busy in enumerate([10.0, 87.0, 30.0]):
        history.add(_sample(now - 60 + i, busy, 40.0 + i))
    peaks = peaks_from_history(history, now)
    assert peaks is not None
    (gpu,) = peaks.gpus
    assert gpu.busy == "87 %" and gpu.temp_edge == "42 °C" and gpu.vram == "87.00 GiB"
    assert gpu.samples == 3 and gpu.power == "n/a" and "RX 7900 XTX" in gpu.name
    assert "CPU up to 44 %" in peaks.host


def test_no_samples_no_peaks() -> None:
    assert peaks_from_history(TelemetryHistory(full_capacity=10, coarse_capacity=10)) is None
    assert peaks_from_history(None) is None
    assert peaks_from_samples([]) is None


def test_peaks_of_an_hour_at_the_fastest_interval_take_milliseconds() -> None:
    """The dialog reads them on the GUI thread: they must stay cheap."""
    history = TelemetryHistory()
    now = time.time()
    for i in range(36_000):
        history.add(_sample(now - 3600 + i * 0.1, float(i % 100), 50.0))
    started = time.perf_counter()
    peaks = peaks_from_history(history, now)
    elapsed = time.perf_counter() - started
    assert peaks is not None and peaks.gpus[0].busy == "99 %"
    assert elapsed < 0.1, elapsed


def test_a_spike_older_than_the_full_resolution_is_its_buckets_maximum() -> None:
    """Past the full-resolution tier the history keeps 10 s buckets: the report takes each
    bucket's maximum (a mean would halve a short spike), and each sensor its own."""
    now = 10_000.0
    history = TelemetryHistory(full_capacity=5, coarse_capacity=100)
    ident = GpuIdentity("k", "card0", "k", "1002:744c", "RX 7900 XTX", "gfx1100")
    for i in range(60):
        busy = 95.0 if i == 3 else 5.0  # one short spike, long ago
        gpu = GpuSample(
            ident, False, busy_percent=busy, temp_edge_c=40.0, temp_junction_c=70.0 + (i == 3)
        )
        history.add(
            Sample(now - 600 + i, (gpu,), HostSample(1.0, (), 1 << 30, 2 << 30, None, None, None))
        )
    peaks = peaks_from_history(history, now)
    assert peaks is not None
    (gpu,) = peaks.gpus
    assert gpu.busy == "95 %"
    assert gpu.temp_edge == "40 °C" and gpu.temp_junction == "71 °C"
