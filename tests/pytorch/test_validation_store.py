"""Validation runs: sqlite round trip and migrations, Markdown export, comparison, partial runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.errors import PanelError
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.knowledge.torch_builds import Override
from rocmpanel.pytorch.validation_job import CheckCollector, run_from_outcome
from rocmpanel.pytorch.validation_report import (
    compare,
    compare_markdown,
    fix_for,
    run_title,
    to_markdown,
)
from rocmpanel.pytorch.validation_run import CheckResult, RunVerdict, ValidationRun
from rocmpanel.pytorch.validation_store import _SCHEMA_1, ValidationStore


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


def test_store_has_its_own_versioned_file():
    ValidationStore().save(_run(1.0))
    assert not paths.database_file().exists()  # the shared file is neither made nor touched
    conn = sqlite3.connect(paths.validation_database_file())
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert version == 3
    assert {"validation_runs", "validation_checks"} <= names


# What rocmpanel wrote before the store had its own file: its tables, created with IF NOT
# EXISTS next to the chat history in data/rocmpanel.sqlite3, and no user_version.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS validation_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    python TEXT NOT NULL,
    env_name TEXT,
    torch_version TEXT,
    build TEXT,
    device_name TEXT,
    gfx TEXT,
    gcn_arch TEXT,
    os TEXT NOT NULL,
    outcome TEXT NOT NULL,
    info_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS validation_checks (
    run_id INTEGER NOT NULL REFERENCES validation_runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    check_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    figure TEXT NOT NULL,
    value REAL,
    unit TEXT,
    detail TEXT NOT NULL,
    fix_id TEXT,
    error TEXT,
    PRIMARY KEY (run_id, position)
);
"""


def _write_old_file(path: Path) -> None:
    """Two runs (the first deleted since, so ids 2 and 3) the way the old store saved them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY, title TEXT)")  # chat's
    conn.executescript(OLD_SCHEMA)
    with conn:
        for tflops in (5.0, 20.0, 25.0):
            cur = conn.execute(
                "INSERT INTO validation_runs (created_at, python, env_name, torch_version, "
                "build, device_name, gfx, gcn_arch, os, outcome, info_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (1.7e9, "/envs/a/bin/python", "torch-2.12", "2.12.0+rocm7.2", "rocm",
                 "Radeon RX 6700 XT", "gfx1031", "gfx1031", "linux", "completed",
                 json.dumps({"seconds": 3.5})),
            )  # fmt: skip
            conn.executemany(
                "INSERT INTO validation_checks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (cur.lastrowid, 0, "import", "torch imports", "pass", "1.2 s", 1.2, "s",
                     "", None, None),
                    (cur.lastrowid, 1, "tflops_float16", "GEMM TFLOPS float16", "pass",
                     f"{tflops} TFLOPS", tflops, "TFLOPS", "", None, None),
                ],
            )  # fmt: skip
        conn.execute("DELETE FROM validation_runs WHERE id = 1")
    conn.close()


def test_runs_of_the_old_shared_file_are_carried_over():
    old = paths.database_file()
    _write_old_file(old)
    before = old.read_bytes()
    store = ValidationStore()
    runs = store.list_runs()
    assert [r.id for r in runs] == [3, 2]
    newest = runs[0]
    assert newest.env_name == "torch-2.12" and newest.gfx == "gfx1031"
    assert newest.info == {"seconds": 3.5} and newest.verdict is RunVerdict.PASS
    assert [(c.id, c.status, c.value) for c in newest.checks] == [
        ("import", CheckStatus.PASS, 1.2),
        ("tflops_float16", CheckStatus.PASS, 25.0),
    ]
    assert store.save(_run(30.0)).id == 4  # new runs never reuse a carried-over id
    store.delete(2)
    assert [r.id for r in ValidationStore().list_runs()] == [4, 3]  # copied once only
    assert old.read_bytes() == before  # the old file was only read


def test_an_unreadable_old_file_does_not_block_the_new_store():
    old = paths.database_file()
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes(b"this is not a database" * 100)
    store = ValidationStore()
    assert store.list_runs() == []
    assert store.save(_run(1.0)).id == 1


def test_a_file_from_a_newer_rocmpanel_is_refused(tmp_path: Path):
    path = tmp_path / "validation.sqlite3"
    ValidationStore(path).save(_run(1.0))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(PanelError, match="newer rocmpanel"):
        ValidationStore(path).list_runs()


def test_markdown_has_table_and_fix_with_override():
    run = _run(20.0, gemm_status="fail")
    overrides = {"gfx1031": Override("gfx1031", "10.3.0", "gfx1030", ())}
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
        [CheckResult("import", "torch imports", CheckStatus.PASS, "1 s")],
        "crashed",
        "The worker was killed by SIGSEGV.\nhipErrorNoBinaryForGpu",
        python="/p",
        gfx="gfx1031",
    )
    assert run.verdict is RunVerdict.INCOMPLETE
    assert [c.status for c in run.checks] == [CheckStatus.PASS, CheckStatus.FAIL]
    fix = fix_for(run, run.checks[-1])
    assert fix is not None and fix.id == "no_binary_for_gpu"
    assert CheckResult.from_dict({"status": "weird"}).status is CheckStatus.FAIL


# -- the tuning preset a run ran under -----------------------------------------------------


def _preset_run(preset: object) -> ValidationRun:
    data = {"started_at": 1.0, "checks": [], "preset": preset}
    return ValidationRun.from_result(data, python="/p", preset="Started under")


def test_a_run_records_the_preset_the_worker_reports():
    assert _preset_run({"id": "rdna3", "name": "RDNA3 consumer"}).preset == "RDNA3 consumer"
    assert _preset_run({"id": "rdna3", "name": ""}).preset == "rdna3"
    # No preset in the result (an older worker) or a garbled one: what the job started under.
    assert _preset_run(None).preset == "Started under"
    assert _preset_run(["RDNA3"]).preset == "Started under"
    assert ValidationRun.from_result({"checks": []}, python="/p").preset == "none"


def test_a_run_that_died_keeps_the_preset_it_was_started_under():
    outcome = JobOutcome(JobState.CRASHED, -11, "The worker was killed by SIGSEGV.")
    kwargs = {"python": "/p", "env_name": None, "gfx": None}
    run = run_from_outcome(outcome, CheckCollector(), preset="Low VRAM", **kwargs)
    assert run.outcome == "crashed" and run.preset == "Low VRAM"
    assert run_from_outcome(outcome, CheckCollector(), **kwargs).preset == "none"


def test_the_preset_is_stored_and_shown_in_the_report(tmp_path: Path):
    store = ValidationStore(tmp_path / "db.sqlite3")
    run = ValidationRun.from_result(
        {"started_at": 1.0, "checks": [], "preset": {"id": "t", "name": "Throughput"}}, python="/p"
    )
    again = store.get(store.save(run).id or 0)
    assert again is not None and again.preset == "Throughput"
    assert "\n- Tuning preset: Throughput\n" in to_markdown(again)
    assert run_title(again).endswith(" /p: 0 pass, 0 fail, 0 skip (preset Throughput)")
    assert run_title(_run(1.0)).endswith(" torch-2.12: 3 pass, 0 fail, 0 skip")  # no preset
    text = compare_markdown(again, _run(1.0))
    assert " /p: 0 pass, 0 fail, 0 skip (torch n/a, no GPU, preset: Throughput)\n" in text
    assert "(torch 2.12.0+rocm7.2, Radeon RX 6700 XT, preset: none)" in text


def test_runs_saved_before_presets_read_as_none(tmp_path: Path):
    path = tmp_path / "validation.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA_1)
    conn.execute(
        "INSERT INTO validation_runs (created_at, python, os, outcome, info_json) "
        "VALUES (5.0, '/old', 'linux', 'completed', '{}')"
    )
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store = ValidationStore(path)
    [old] = store.list_runs()
    assert (old.id, old.python, old.preset) == (1, "/old", "none")
    store.save(_preset_run({"id": "x", "name": "Debugging"}))
    assert [r.preset for r in store.list_runs()] == ["Debugging", "none"]


def test_a_preset_that_is_not_text_marks_the_run_damaged(tmp_path: Path):
    path = tmp_path / "validation.sqlite3"
    store = ValidationStore(path)
    store.save(_run(1.0))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE validation_runs SET preset = x'00ff'")  # TEXT keeps a blob as is
    conn.commit()
    conn.close()
    [run] = store.list_runs()
    assert run.damaged == "preset is 2 bytes of binary data, not text"
