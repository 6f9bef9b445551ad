"""The validation worker, for real, in this interpreter's CPU torch."""

from __future__ import annotations

import pytest

from rocmpanel.jobs.process import JobProcess
from rocmpanel.jobs.spec import prepare
from rocmpanel.pytorch import operations as torch_jobs
from rocmpanel.pytorch.explanations import explain
from rocmpanel.pytorch.validation_report import fix_for, to_markdown
from rocmpanel.pytorch.validation_store import ValidationStore

pytestmark = pytest.mark.torch


def test_cpu_torch_reports_not_a_rocm_build_with_its_fix():
    torch = pytest.importorskip("torch")
    if torch.version.hip or torch.cuda.is_available():
        pytest.skip("this test is about a CPU-only torch")
    collector = torch_jobs.CheckCollector()
    spec = torch_jobs.validate_spec("", gfx="gfx1100", sysfs_vram_bytes=8 * 2**30, quick=True)
    job = JobProcess(prepare(spec), collector.feed, lambda o: None)
    job.start()
    outcome = job.wait(180)
    assert outcome is not None and outcome.was_successful(), str(outcome)
    run = torch_jobs.run_from_outcome(outcome, collector, python="", env_name=None, gfx="gfx1100")
    by_id = {c.id: c for c in run.checks}
    assert by_id["import"].status == "pass" and torch.__version__ in by_id["import"].figure
    build = by_id["build"]
    assert build.status == "fail" and "not a ROCm build" in build.figure
    assert build.fix_id == "not_rocm_build"
    fix = fix_for(run, build)
    assert fix is not None and "Install the ROCm build" in fix.fix
    assert explain(build.fix_id) == fix
    # Every GPU check is skipped, saying why, never faked.
    gpu_checks = [c for c in run.checks if c.id not in ("import", "build")]
    assert gpu_checks and all(c.status == "skip" and c.figure for c in gpu_checks)
    assert all(c.value is None for c in gpu_checks)
    # The streamed checks and the final result agree.
    assert [c["id"] for c in collector.checks] == [c.id for c in run.checks]
    assert run.build == "cpu" and run.torch_version == torch.__version__
    saved = ValidationStore().save(run)
    assert saved.id is not None
    assert "not a ROCm build" in to_markdown(saved)
