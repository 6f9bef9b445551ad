"""Validation runs: sqlite round trip, Markdown export, comparison, partial runs."""

from __future__ import annotations

from pathlib import Path

from rocmpanel.pytorch.manifest import Override
from rocmpanel.pytorch.validation_report import compare, compare_markdown, fix_for, to_markdown
from rocmpanel.pytorch.validation_store import CheckResult, ValidationRun, ValidationStore


def _run(tflops: float, gemm_status: str = "pass", when: float = 1_700_000_000.0) -> ValidationRun:
    return ValidationRun.from_result(
        {
            "started_at": when,
            "python": "/envs/a/bin/python",
            "torch_version": "2.12.0+rocm7.2",
            "build": "rocm",
            "device_name": "Radeon RX 6700 XT",
            "system": "linux",
            "checks": [
                {"id": "import", "name": "torch imports", "status": "pass", "figure": "1.2 s"},
                {
                    "id": "gemm_float16",
                    "name": "GEMM float16 vs CPU",
                    "status": gemm_status,
                    "figure": "relative error 1e-3",
                    "value": 1e-3,
                    "unit": "rel",
                    "error": None
                    if gemm_status == "pass"
                    else "RuntimeError: HIP error: hipErrorNoBinaryForGpu",
                },
                {
                    "id": "tflops_float16",
                    "name": "GEMM TFLOPS float16",
                    "status": "pass",
                    "figure": f"{tflops} TFLOPS",
                    "value": tflops,
                    "unit": "TFLOPS",
                },
            ],
        },
        env_name="torch-2.12",
        gfx="gfx1031",
    )


def test_store_round_trip(tmp_path: Path):
    store = ValidationStore(tmp_path / "db.sqlite3")
    saved = store.save(_run(20.0))
    assert saved.id is not None
    again = store.get(saved.id)
    assert again is not None
    assert again.checks == saved.checks
    assert again.torch_version == "2.12.0+rocm7.2" and again.gfx == "gfx1031"
    store.save(_run(25.0))
    assert [r.id for r in store.list_runs()] == [saved.id + 1, saved.id]
    store.delete(saved.id)
    assert store.get(saved.id) is None


def test_store_uses_the_panel_database_with_prefixed_tables():
    import sqlite3

    from rocmpanel.base import paths

    ValidationStore().save(_run(1.0))
    conn = sqlite3.connect(paths.database_file())
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert {"validation_runs", "validation_checks"} <= names
    assert all(n.startswith(("validation_", "sqlite_")) for n in names if "valid" in n)


def test_markdown_has_table_and_fix_with_override():
    run = _run(20.0, gemm_status="fail")
    overrides = {"gfx1031": Override("gfx1031", "10.3.0", "gfx1030")}
    text = to_markdown(run, overrides)
    assert "| GEMM float16 vs CPU | FAIL |" in text
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in text
    fix = fix_for(run, run.checks[1], overrides)
    assert fix is not None and fix.id == "no_binary_for_gpu"
    assert fix_for(run, run.checks[0], overrides) is None


def test_compare_reports_change_of_measured_values():
    a, b = _run(20.0), _run(25.0, gemm_status="fail")
    rows = {r.check_id: r for r in compare(a, b)}
    assert rows["tflops_float16"].change is not None
    assert abs(rows["tflops_float16"].change - 0.25) < 1e-9
    assert rows["gemm_float16"].status_changed
    text = compare_markdown(a, b)
    assert "+25.0%" in text and "| Check | A | B | Change |" in text


def test_partial_run_keeps_done_checks_and_says_how_it_ended():
    run = ValidationRun.from_partial(
        [{"id": "import", "name": "torch imports", "status": "pass", "figure": "1 s"}],
        "crashed",
        "The worker was killed by SIGSEGV.\nhipErrorNoBinaryForGpu",
        python="/p",
        gfx="gfx1031",
    )
    assert run.verdict == "incomplete"
    assert [c.status for c in run.checks] == ["pass", "fail"]
    fix = fix_for(run, run.checks[-1])
    assert fix is not None and fix.id == "no_binary_for_gpu"
    assert CheckResult.from_dict({"status": "weird"}).status == "fail"
