"""The A/B benchmark panel: real JobManager jobs running a canned worker (each run's
figures, error or hang chosen by the test), driven to the end, cancelled, failed; the
table, the sentence, the chart, the saved file, export; demo and no-model states; one
real CPU run of workers/bench.py."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.gui.report import release_sink, set_sink
from rocmpanel.jobs.job_env import job_env_for
from rocmpanel.jobs.presets import Preset
from rocmpanel.jobs.runner import Job, JobManager
from rocmpanel.jobs.spec import JobSpec
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.tuning.bench import BenchPlan, BenchResult
from rocmpanel.tuning.bench_stats import spread_text
from rocmpanel.tuning.views import bench_panel, bench_saved
from rocmpanel.tuning.views.bench_panel import (
    DEMO_REASON,
    NO_CHAT_MODEL,
    NO_GPU_NOTE,
    BenchPanel,
)
from rocmpanel.tuning.views.bench_table import (
    result_label,
    result_tooltip,
    sentence_case,
    summary_text,
)

FAST = Preset(id="fast", name="Fast", description="Made up for the test.")
SLOW = Preset(id="slow", name="Slow")

# The canned worker: what each run does comes from the plan file (per preset, per run).
CANNED = r"""
import json, os, sys, time
from pathlib import Path

side = os.environ["CANNED_SIDE"]
plan_file = Path(os.environ["CANNED_PLAN"])
counter = plan_file.with_name("count-" + side)
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
run = json.loads(plan_file.read_text())[side][n]
with plan_file.with_name("argv").open("a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")

def emit(**fields):
    print(json.dumps(fields), flush=True)

emit(event="progress", fraction=0.5, step="measuring")
if "error" in run:
    emit(event="error", message=run["error"], kind="error")
    sys.exit(1)
if run.get("hang"):
    emit(event="log", message="hanging", level="info")
    time.sleep(120)
preset = None if side == "none" else {"id": side, "name": side.title()}
cases = [
    {"case": name, "unit": unit, "higher_is_better": unit != "ms", "value": value}
    for name, unit, value in run["cases"]
]
emit(event="result", data={"cases": cases, "device_label": "CPU", "device": "cpu",
     "torch_version": "2.13.0+cpu", "preset": preset, "preset_settings": []})
"""


def ok(gemm128: float, gemm256: float) -> dict[str, Any]:
    return {"cases": [["gemm 128 fp32", "TFLOP/s", gemm128], ["gemm 256 fp32", "TFLOP/s", gemm256]]}


class CannedJobs(JobManager):
    """A real JobManager whose bench jobs run the canned worker under this Python; the
    spec's preset reaches the worker as CANNED_SIDE (the main window's env provider does
    the real preset header)."""

    def __init__(self, folder: Path, plan: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__(grace_s=1.0)
        self.script = folder / "canned_bench.py"
        self.script.write_text(CANNED, encoding="utf-8")
        self.plan_file = folder / "plan.json"
        self.plan_file.write_text(json.dumps(plan), encoding="utf-8")
        self.specs: list[JobSpec] = []

    def start(self, spec: JobSpec) -> Job:
        self.specs.append(spec)
        env = {"CANNED_SIDE": spec.preset or "", "CANNED_PLAN": str(self.plan_file)}
        return super().start(
            dataclasses.replace(spec, worker=self.script, python=sys.executable, env=env)
        )

    def argvs(self) -> list[list[str]]:
        lines = (self.plan_file.parent / "argv").read_text().splitlines()
        return [json.loads(line) for line in lines]


@pytest.fixture
def make_panel(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    real_load_presets = bench_panel.load_presets
    monkeypatch.setattr(bench_panel, "load_presets", lambda: [FAST, SLOW])
    made: list[BenchPanel] = []

    def make(
        plan: dict[str, list[dict[str, Any]]] | None = None,
        *,
        settings: Settings | None = None,
        demo: bool = False,
        inventory: Inventory | None = None,
        jobs: JobManager | None = None,
        real_store: bool = False,
        active: str = "",
    ) -> BenchPanel:
        if real_store:
            monkeypatch.setattr(bench_panel, "load_presets", real_load_presets)
        holder = InventoryHolder(detector=lambda: Inventory(SystemInfo("linux")))
        if inventory is not None:
            holder.set_current(inventory)
        manager = jobs or CannedJobs(tmp_path, plan or {})
        messages: list[str] = []
        ctx = AppContext(
            settings or Settings.load(), manager, messages.append, inventory=holder, demo=demo
        )
        ctx.active_preset.set(active)
        panel = BenchPanel(ctx)
        panel.messages = messages  # type: ignore[attr-defined]
        qtbot.addWidget(panel)
        qtbot.waitUntil(lambda: panel.b_combo.count() > 1, timeout=5000)
        made.append(panel)
        return panel

    yield make
    for panel in made:
        panel.shutdown()
        panel.ctx.jobs.shutdown()
    wait_for_background()


def choose(panel: BenchPanel, a: str, b: str, reps: int) -> None:
    panel.a_combo.setCurrentIndex(panel.a_combo.findData(a))
    panel.b_combo.setCurrentIndex(panel.b_combo.findData(b))
    panel.reps_spin.setValue(reps)


def run_to_end(qtbot, panel: BenchPanel, saved: int = 1) -> None:
    """Run and wait until the run has ended and the saved list shows ``saved`` results."""
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.run is None, timeout=60_000)
    qtbot.waitUntil(lambda: panel.saved.list.count() == saved, timeout=10_000)


def test_defaults_a_is_no_preset_b_the_active_preset(make_panel) -> None:
    settings = Settings.load()
    settings.general.active_preset = "fast"  # the file may say otherwise: jobs use the holder
    panel = make_panel(settings=settings, active="slow")
    assert [panel.a_combo.itemText(i) for i in range(3)] == ["No preset", "Fast", "Slow"]
    assert panel.a_combo.currentData() == "none"
    assert panel.b_combo.currentData() == "slow"
    assert panel.b_combo.itemData(1, bench_panel.Qt.ItemDataRole.ToolTipRole) == (
        "Made up for the test."
    )
    assert (panel.reps_spin.minimum(), panel.reps_spin.maximum(), panel.reps_spin.value()) == (
        2,
        50,
        5,
    )
    assert [panel.workload_combo.itemData(i) for i in range(4)] == ["gemm", "sdpa", "alloc", "chat"]
    assert panel.device_combo.currentData() == "auto"


def test_without_an_active_preset_b_is_the_first_preset(make_panel) -> None:
    panel = make_panel()
    assert (panel.a_combo.currentData(), panel.b_combo.currentData()) == ("none", "fast")


def test_a_two_rep_run_alternates_and_shows_table_sentence_chart_and_saved_file(
    qtbot, make_panel
) -> None:
    panel = make_panel({"none": [ok(1.0, 1.0), ok(1.1, 1.2)], "fast": [ok(2.0, 1.1), ok(2.2, 1.3)]})
    choose(panel, "none", "fast", 2)
    formats: list[str] = []
    panel.ctx.jobs.job_added.connect(lambda _job: formats.append(panel.progress.format()))
    run_to_end(qtbot, panel)

    jobs = panel.ctx.jobs
    assert isinstance(jobs, CannedJobs)
    assert [s.preset for s in jobs.specs] == ["none", "fast", "none", "fast"]
    assert jobs.argvs() == [["--workload", "gemm", "--device", "auto"]] * 4
    assert formats == ["run 1 of 4 (A)", "run 2 of 4 (B)", "run 3 of 4 (A)", "run 4 of 4 (B)"]
    assert not panel.progress.isVisible()
    rows = panel.table.rows()
    assert [row[:4] for row in rows] == [
        ("gemm 128 fp32", "1.05 TFLOP/s", "2.1 TFLOP/s", "2×"),
        ("gemm 256 fp32", "1.1 TFLOP/s", "1.2 TFLOP/s", "1.09×"),
    ]  # as `rocmpanel bench` writes them (bench_stats.figure)
    cases = panel.shown.cases  # type: ignore[union-attr]
    # worst B over best A .. best B over worst A; the text as bench_stats formats it
    assert [(c.ratio_low, c.ratio_high) for c in cases] == [
        pytest.approx((2.0 / 1.1, 2.2 / 1.0)),
        pytest.approx((1.1 / 1.2, 1.3 / 1.0)),
    ]
    assert [row[4] for row in rows] == [spread_text(c.ratio_low, c.ratio_high) for c in cases]
    assert rows[0][4] == "1.82×–2.2×"
    # the verdict texts belong to bench_stats: the table shows them as they are
    assert [row[5] for row in rows] == [sentence_case(c.verdict) for c in cases]
    assert panel.summary_label.text() == summary_text(panel.shown)  # type: ignore[arg-type]
    assert panel.summary_label.text().startswith(
        "A: No preset vs B: Fast — GEMM on CPU, 2 runs of A, 2 of B.\n"
    )
    assert panel.error_label.isHidden()
    assert panel.chart is not None
    assert panel.chart.bar_count() == 4
    assert panel.chart.titles == ["TFLOP/s, higher is better — CPU"]
    saved = sorted((paths.data_dir() / "bench").glob("*.json"))
    assert len(saved) == 1
    data = json.loads(saved[0].read_text(encoding="utf-8"))
    assert data["id"] == saved[0].stem == panel.shown.id  # type: ignore[union-attr]
    assert [c["case"] for c in data["cases"]] == ["gemm 128 fp32", "gemm 256 fp32"]
    assert panel.saved.list.currentItem() is not None
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()


def test_when_every_case_overlaps_the_sentence_names_no_winner(qtbot, make_panel) -> None:
    panel = make_panel({"none": [ok(1.0, 5.0), ok(1.2, 5.0)], "slow": [ok(1.1, 4.9), ok(1.3, 5.1)]})
    choose(panel, "none", "slow", 2)
    run_to_end(qtbot, panel)
    assert panel.summary_label.text() == (
        "A: No preset vs B: Slow — GEMM on CPU, 2 runs of A, 2 of B.\n"
        "No measurable difference in any case: the runs of A and B overlap."
    )
    assert [row[5] for row in panel.table.rows()] == ["No measurable difference"] * 2


def test_cancel_mid_run_keeps_the_finished_runs(qtbot, make_panel) -> None:
    panel = make_panel({"none": [ok(1.0, 1.0), {"hang": True}], "fast": [ok(2.0, 2.0)]})
    choose(panel, "none", "fast", 2)
    panel.run_button.click()
    qtbot.waitUntil(lambda: len(panel.ctx.jobs.specs) == 3, timeout=30_000)
    job = panel.job
    assert job is not None
    qtbot.waitUntil(lambda: any(line.message == "hanging" for line in job.log), timeout=30_000)
    assert panel.progress.format() == "run 3 of 4 (A)"
    assert panel.cancel_button.isEnabled()
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: panel.run is None, timeout=30_000)
    qtbot.waitUntil(lambda: panel.saved.list.count() == 1, timeout=10_000)
    assert not job.running
    assert len(panel.ctx.jobs.specs) == 3  # no run after the cancel
    assert [row[:3] for row in panel.table.rows()] == [
        ("gemm 128 fp32", "1 TFLOP/s", "2 TFLOP/s"),
        ("gemm 256 fp32", "1 TFLOP/s", "2 TFLOP/s"),
    ]
    shown = panel.shown
    assert shown is not None and [(c.a, c.b) for c in shown.cases] == [((1.0,), (2.0,))] * 2
    assert [row[5] for row in panel.table.rows()] == [sentence_case(c.verdict) for c in shown.cases]
    assert panel.error_label.text() == (
        "Cancelled after 2 of 4 runs; the figures are from the runs that finished."
    )
    assert panel.messages == ["A/B benchmark cancelled; the runs measured so far are kept."]
    assert panel.run_button.isEnabled()


def test_a_run_cancelled_from_the_jobs_strip_ends_as_the_panels_cancel(qtbot, make_panel) -> None:
    panel = make_panel({"none": [ok(1.0, 1.0), {"hang": True}], "fast": [ok(2.0, 2.0)]})
    choose(panel, "none", "fast", 2)
    panel.run_button.click()
    qtbot.waitUntil(lambda: len(panel.ctx.jobs.specs) == 3, timeout=30_000)
    job = panel.job
    assert job is not None
    qtbot.waitUntil(lambda: any(line.message == "hanging" for line in job.log), timeout=30_000)
    job.cancel()  # the chip's Cancel in the jobs strip: the job's own
    qtbot.waitUntil(lambda: panel.run is None, timeout=30_000)
    qtbot.waitUntil(lambda: panel.saved.list.count() == 1, timeout=10_000)
    assert len(panel.ctx.jobs.specs) == 3  # no run after the cancel
    shown = panel.shown
    assert shown is not None and shown.cancelled
    assert shown.errors == [
        "Cancelled after 2 of 4 runs; the figures are from the runs that finished."
    ]
    assert panel.error_label.text() == shown.errors[0]
    assert panel.messages == ["A/B benchmark cancelled; the runs measured so far are kept."]
    saved = json.loads(next((paths.data_dir() / "bench").glob("*.json")).read_text("utf-8"))
    assert saved["cancelled"] is True
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()


def test_a_failed_run_stops_and_shows_its_message(qtbot, make_panel) -> None:
    panel = make_panel(
        {"none": [ok(1.0, 1.0)], "fast": [{"error": "HIP out of memory: 2.00 GiB asked."}]}
    )
    choose(panel, "none", "fast", 3)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.run is None, timeout=30_000)
    assert len(panel.ctx.jobs.specs) == 2
    assert panel.error_label.text() == (
        "Run 1 of B (Fast) failed: HIP out of memory: 2.00 GiB asked. "
        "gemm 128 fp32: measured under A only; not compared. "
        "gemm 256 fp32: measured under A only; not compared."
    )
    assert panel.error_label.isVisibleTo(panel)
    assert panel.table.rows() == []
    assert panel.summary_label.text() == (
        "A: No preset vs B: Fast — GEMM on CPU, 1 run of A, 0 of B.\n"
        "Nothing was measured on both sides."
    )
    wait_for_background()
    assert not (paths.data_dir() / "bench").exists()  # nothing measured on both sides


def test_a_job_that_cannot_start_ends_the_run_with_the_reason(qtbot, make_panel) -> None:
    settings = Settings.load()
    settings.general.workload_python = "/nowhere/python3"
    panel = make_panel(settings=settings, jobs=JobManager(grace_s=1.0))
    choose(panel, "none", "fast", 2)
    status_bar: list[str] = []
    set_sink(status_bar.append)
    try:
        panel.run_button.click()
        qtbot.waitUntil(lambda: panel.run is None, timeout=10_000)
    finally:
        release_sink(status_bar.append)
    assert status_bar == ["The workload Python '/nowhere/python3' does not exist."]
    assert panel.error_label.text() == (
        "Run 1 of A (none) failed: The workload Python '/nowhere/python3' does not exist."
    )
    assert panel.run_button.isEnabled()


def test_demo_mode_disables_run_and_says_why(make_panel) -> None:
    panel = make_panel(demo=True)
    assert not panel.run_button.isEnabled()
    assert panel.run_button.toolTip() == DEMO_REASON
    assert panel.note_label.text() == DEMO_REASON
    panel.start()
    assert panel.run is None


def test_chat_decode_needs_a_configured_model(make_panel, tmp_path: Path) -> None:
    panel = make_panel()
    chat = panel.workload_combo.findData("chat")
    model = panel.workload_combo.model()
    assert not model.item(chat).isEnabled()  # type: ignore[attr-defined]
    assert panel.workload_combo.itemData(chat, bench_panel.Qt.ItemDataRole.ToolTipRole) == (
        NO_CHAT_MODEL
    )
    assert panel.note_label.isHidden()  # chat is not chosen: its tooltip says why
    panel.ctx.settings.chat.last_model = str(tmp_path / "tiny-llama")
    panel.refresh()
    assert model.item(chat).isEnabled()  # type: ignore[attr-defined]
    assert panel.note_label.isHidden()
    panel.workload_combo.setCurrentIndex(chat)
    assert panel.plan().model == str(tmp_path / "tiny-llama")
    assert panel.plan().workload == "chat"

    panel.ctx.settings.chat.last_model = ""
    panel.refresh()
    assert panel.workload_combo.currentData() == "gemm"  # no longer offered


def test_showing_the_panel_again_rereads_presets_and_the_chat_model(
    qtbot, make_panel, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = make_panel()
    panel.show()
    qtbot.waitExposed(panel)
    panel.hide()
    monkeypatch.setattr(bench_panel, "load_presets", lambda: [FAST, SLOW, Preset("new", "New")])
    panel.ctx.settings.chat.last_model = "/models/tiny"
    panel.show()
    chat = panel.workload_combo.findData("chat")
    assert panel.workload_combo.model().item(chat).isEnabled()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: panel.b_combo.count() == 4, timeout=5000)
    assert panel.b_combo.itemText(3) == "New"
    assert panel.b_combo.currentData() == "fast"  # the choice made is kept


def test_presets_that_cannot_be_listed_leave_no_preset_and_say_why(
    qtbot, make_panel, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = make_panel()

    def broken() -> list[Preset]:
        raise PanelError("presets.yaml, line 3: name: must be text.")

    monkeypatch.setattr(bench_panel, "load_presets", broken)
    panel.refresh()
    expected = "presets.yaml, line 3: name: must be text."
    qtbot.waitUntil(lambda: panel.note_label.text() == expected, timeout=5000)
    assert panel.b_combo.currentData() == "fast"  # the list read before is kept
    monkeypatch.setattr(bench_panel, "load_presets", lambda: [FAST])
    panel.refresh()
    qtbot.waitUntil(lambda: panel.note_label.text() == "", timeout=5000)
    assert panel.note_label.isHidden()


def test_no_gpu_runs_on_the_cpu_and_says_so(make_panel) -> None:
    panel = make_panel(inventory=Inventory(SystemInfo("linux")))
    assert panel.device_combo.currentData() == "cpu"
    assert panel.note_label.text() == NO_GPU_NOTE
    assert panel.plan().device == "cpu"
    assert panel.quick_check.isChecked() and panel.plan().quick  # the CPU is slow at full size


def test_quick_is_off_with_a_gpu_and_a_choice_made_stays(make_panel) -> None:
    panel = make_panel()  # the fixture's machine has an AMD GPU
    assert not panel.quick_check.isChecked()
    panel.quick_check.click()
    assert panel.quick_check.isChecked()
    panel.ctx.inventory.set_current(Inventory(SystemInfo("linux")))
    assert panel.quick_check.isChecked()
    panel.quick_check.click()  # unticked on a CPU-only machine: stays unticked
    panel.ctx.inventory.set_current(Inventory(SystemInfo("linux")))
    assert not panel.quick_check.isChecked()


def test_a_saved_result_reads_short_with_the_full_text_in_its_tooltip() -> None:
    plan = BenchPlan("none", "a-preset-with-a-long-name", "gemm", reps=2)
    result = BenchResult(
        plan,
        "No preset",
        "A preset with a long name",
        "AMD Radeon RX 7900 XTX (gfx1100)",
        "2.13.0+rocm7.2",
        started=1_780_000_000.0,
        finished=1_780_000_060.0,
    )
    local = time.localtime(1_780_000_000.0)  # the list shows local time
    short, full = time.strftime("%m-%d %H:%M", local), time.strftime("%Y-%m-%d %H:%M", local)
    assert result_label(result) == f"{short} No preset vs A preset with a long name, GEMM"
    assert result_tooltip(result) == (
        f"{full}: A No preset vs B A preset with a long name\n"
        "GEMM on AMD Radeon RX 7900 XTX (gfx1100)"
    )


def test_a_saved_result_is_listed_shown_and_exported(
    qtbot, make_panel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = make_panel({"none": [ok(1.0, 1.0), ok(1.0, 1.0)], "fast": [ok(2.0, 2.0), ok(2.0, 2.0)]})
    choose(panel, "none", "fast", 2)
    run_to_end(qtbot, panel)

    again = make_panel()  # a fresh panel lists it and shows it when selected
    qtbot.waitUntil(lambda: again.saved.list.count() == 1, timeout=10_000)
    assert again.shown is None and not again.saved.export_button.isEnabled()
    again.saved.list.setCurrentRow(0)
    assert again.shown is not None
    assert again.table.rows() == panel.table.rows()
    entry = again.saved.list.item(0)
    assert entry.text() == result_label(again.shown)
    assert entry.toolTip() == result_tooltip(again.shown)
    assert again.saved.list.wordWrap()  # a long entry wraps instead of scrolling off
    assert again.saved.list.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert again.saved.export_button.isEnabled()

    target = tmp_path / "out" / "ab"
    target.parent.mkdir()
    monkeypatch.setattr(
        bench_saved.QFileDialog,
        "getSaveFileName",
        lambda *_args: (str(target), "CSV (*.csv)"),
    )
    again.saved.export_button.click()
    csv = target.with_suffix(".csv")
    qtbot.waitUntil(
        lambda: again.messages == [f"Benchmark result exported to {csv}."], timeout=5000
    )
    assert "gemm 128 fp32" in csv.read_text(encoding="utf-8")


ONE_THREAD = """\
id: one-thread
name: One thread
description: CPU intra-op threads set to one.
torch:
  cpu_threads: 1
"""


@pytest.mark.torch
@pytest.mark.slow
def test_a_real_cpu_run_of_the_bench_worker_under_a_user_preset(qtbot, make_panel) -> None:
    pytest.importorskip("torch")
    folder = paths.config_dir() / "presets"
    folder.mkdir(parents=True)
    (folder / "one-thread.yaml").write_text(ONE_THREAD, encoding="utf-8")
    jobs = JobManager(grace_s=1.0)
    jobs.env_provider = lambda spec: job_env_for(spec, active="")  # as the main window does
    panel = make_panel(jobs=jobs, real_store=True)
    assert panel.b_combo.findData("one-thread") > 0  # listed from the real store
    choose(panel, "none", "one-thread", 2)
    panel.device_combo.setCurrentIndex(panel.device_combo.findData("cpu"))
    panel.quick_check.setChecked(True)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.run is None, timeout=120_000)
    qtbot.waitUntil(lambda: panel.saved.list.count() == 1, timeout=10_000)
    shown = panel.shown
    assert shown is not None
    assert shown.errors == []
    assert shown.device_label == "CPU"
    assert [(run["side"], run["preset"]) for run in shown.runs] == [
        ("A", None),
        ("B", {"id": "one-thread", "name": "One thread"}),
        ("A", None),
        ("B", {"id": "one-thread", "name": "One thread"}),
    ]
    assert shown.cases and all(len(c.a) == len(c.b) == 2 for c in shown.cases)
    assert panel.chart is not None
    assert panel.chart.bar_count() == 2 * len(shown.cases)
    assert panel.chart.titles == ["TFLOP/s, higher is better — CPU"]
    assert len(panel.table.rows()) == len(shown.cases)
    for case in shown.cases:  # the figures measured, for the report (pytest -s)
        print(f"{case.case}: A {case.a} B {case.b} {case.unit} -> {case.verdict}")
