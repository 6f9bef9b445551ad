"""The validation worker, for real, in this interpreter's CPU torch."""

from __future__ import annotations

import json
import re

import pytest

from rocmpanel.base.enums import CheckStatus
from rocmpanel.jobs.process import JobProcess
from rocmpanel.jobs.protocol import CheckDone, LogLine
from rocmpanel.jobs.spec import prepare
from rocmpanel.pytorch.explanations import explain
from rocmpanel.pytorch.validation_job import CheckCollector, run_from_outcome, validate_spec
from rocmpanel.pytorch.validation_report import fix_for, to_markdown
from rocmpanel.pytorch.validation_store import ValidationStore

pytestmark = pytest.mark.torch


def test_cpu_torch_reports_not_a_rocm_build_with_its_fix():
    torch = pytest.importorskip("torch")
    if torch.version.hip or torch.cuda.is_available():
        pytest.skip("this test is about a CPU-only torch")
    collector = CheckCollector()
    events: list[object] = []

    def on_event(event: object) -> None:
        events.append(event)
        collector.feed(event)

    header = {"id": "v", "name": "Validation preset", "torch": {"cpu_threads": 2}}
    spec = validate_spec(
        "",
        gfx="gfx1100",
        sysfs_vram_bytes=8 * 2**30,
        quick=True,
        job_env={"ROCMPANEL_PRESET": json.dumps(header)},
    )
    job = JobProcess(prepare(spec), on_event, lambda o: None)
    job.start()
    outcome = job.wait(180)
    assert outcome is not None and outcome.was_successful(), str(outcome)
    # Each check arrives as a typed event the moment it ends, never as a log line.
    assert sum(isinstance(e, CheckDone) for e in events) == len(outcome.result["checks"])
    assert not [e for e in events if isinstance(e, LogLine) and e.level == "check"]
    run = run_from_outcome(outcome, collector, python="", env_name=None, gfx="gfx1100")
    by_id = {c.id: c for c in run.checks}
    assert by_id["import"].status is CheckStatus.PASS
    assert torch.__version__ in by_id["import"].figure
    build = by_id["build"]
    assert build.status is CheckStatus.FAIL and "not a ROCm build" in build.figure
    assert build.fix_id == "not_rocm_build"
    fix = fix_for(run, build)
    assert fix is not None and "Install the planned ROCm build" in fix.fix
    assert explain(build.fix_id) == fix
    # Every GPU check is skipped, saying why, never faked.
    gpu_checks = [c for c in run.checks if c.id not in ("import", "build")]
    assert gpu_checks and all(c.status is CheckStatus.SKIP and c.figure for c in gpu_checks)
    assert all(c.value is None for c in gpu_checks)
    # The streamed checks and the final result agree.
    assert collector.checks == list(run.checks)
    assert run.build == "cpu" and run.torch_version == torch.__version__
    saved = ValidationStore().save(run)
    assert saved.id is not None
    assert "not a ROCm build" in to_markdown(saved)
    # The run records the preset it ran under, and what of it was applied.
    assert saved.preset == "Validation preset"
    assert "- Tuning preset: Validation preset" in to_markdown(saved)
    assert run.info["preset_settings"] == [
        {"key": "cpu_threads", "value": 2, "applied": True, "note": "torch.set_num_threads(2)"}
    ]
    logs = [e.message for e in events if isinstance(e, LogLine)]
    assert "Preset Validation preset: applied cpu_threads." in logs


def test_cli_streams_each_check_then_saves_the_run(capsys):
    torch = pytest.importorskip("torch")
    if torch.version.hip or torch.cuda.is_available():
        pytest.skip("this test is about a CPU-only torch")
    from rocmpanel.shell.cli import main

    assert main(["torch", "validate", "--gfx", "gfx1100", "--quick"]) == 1  # not a ROCm build
    out = capsys.readouterr().out
    assert "  PASS  torch imports: torch " in out
    assert "  FAIL  ROCm build: CPU-only build: not a ROCm build" in out
    assert re.search(r"Run #1: 1 pass, 1 fail, \d+ skip \(completed\)\.", out)
    assert main(["torch", "history", "--export", "1"]) == 0
    assert "| ROCm build | FAIL |" in capsys.readouterr().out


def test_a_cli_run_whose_worker_dies_records_the_active_preset(tmp_path, capsys):
    """A worker that dies before its result still leaves a run saying which preset the
    job was started under (from the job's environment, not the missing result)."""
    from rocmpanel.base.settings import Settings
    from rocmpanel.pytorch.validation_store import ValidationStore
    from rocmpanel.shell.cli import main

    settings = Settings.load()
    settings.general.active_preset = "low-vram"
    settings.save()
    dying = tmp_path / "python"
    dying.write_text("#!/bin/sh\nexit 3\n")
    dying.chmod(0o755)
    assert main(["torch", "validate", "--python", str(dying), "--gfx", "gfx1100"]) == 1
    capsys.readouterr()
    (run,) = ValidationStore().list_runs()
    assert run.preset == "Low VRAM / large model"
