"""The launch panel: the preview follows the fields, errors are said, Save as writes the
file, and Run starts the single-node command as a real job (CPU, gloo, 2 processes)
whose log shows, and can be cancelled."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.multigpu.views.launch_panel import NO_GPU_NOTE, LaunchPanel

TRAIN = """\
import os, sys, time
import torch, torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
# One write per line: the ranks share the job's stdout, and print() writes its pieces
# separately (the job runs unbuffered), so two ranks' words would interleave.
sys.stdout.write(f"sum {value.item()} rank {dist.get_rank()}\\n")
sys.stdout.flush()
if sys.argv[1:] == ["hang"]:
    time.sleep(120)
dist.destroy_process_group()
"""


@pytest.fixture
def panel(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "sys"
    root.mkdir()
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))  # no AMD GPU
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # gloo on the loopback: a host name that resolves elsewhere must not stall the ranks.
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")
    settings = Settings.load()
    settings.general.workload_python = sys.executable
    jobs = JobManager(grace_s=1.0)
    messages: list[str] = []
    made = LaunchPanel(AppContext(settings, jobs, messages.append))
    made.messages = messages  # type: ignore[attr-defined]
    qtbot.addWidget(made)
    qtbot.waitUntil(lambda: made.env is not None, timeout=10000)
    yield made
    jobs.shutdown()
    wait_for_background()


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "my dir" / "train it's.py"
    path.parent.mkdir()
    path.write_text(TRAIN)
    return path


def test_preview_follows_the_fields_and_says_what_is_wrong(panel: LaunchPanel, script: Path):
    assert NO_GPU_NOTE in panel.note_label.text()
    assert panel.error_label.text() == "Choose the training script to launch."
    assert not panel.copy_button.isEnabled() and not panel.run_button.isEnabled()
    panel.script_edit.setText(str(script))
    panel.args_edit.setText("--note 'two words'")
    text = panel.preview.toPlainText()
    assert "--standalone" in text and "--nproc-per-node=1" in text
    assert "--note 'two words'" in text and panel.run_button.isEnabled()
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("multinode"))
    panel.nodes_spin.setValue(3)
    panel.endpoint_edit.setText("head:70000")
    assert "outside 1-65535" in panel.error_label.text()
    assert not panel.save_button.isEnabled() and not panel.run_button.isEnabled()
    panel.endpoint_edit.setText("head:29400")
    assert "--rdzv-endpoint=head:29400" in panel.preview.toPlainText()
    assert "--nnodes=3" in panel.preview.toPlainText()
    assert not panel.run_button.isEnabled()  # Run is for the single-node kind
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("deepspeed"))
    assert json.loads(panel.preview.toPlainText())["zero_optimization"]["stage"] == 3
    panel.kind_combo.setCurrentIndex(panel.kind_combo.findData("torchrun"))
    panel.args_edit.setText("'unclosed")
    assert "quote is not closed" in panel.error_label.text()


def test_widgets_have_accessible_names(panel: LaunchPanel):
    for widget in (
        panel.script_edit,
        panel.args_edit,
        panel.kind_combo,
        panel.nodes_spin,
        panel.procs_spin,
        panel.endpoint_edit,
        panel.preview,
        panel.log,
    ):
        assert widget.accessibleName()


def test_save_as_writes_the_preview(qtbot, panel: LaunchPanel, script: Path, tmp_path: Path):
    panel.script_edit.setText(str(script))
    target = tmp_path / "launch.sh"
    target.write_text("old\n")
    panel.save_to(target)
    qtbot.waitUntil(lambda: "Saved as" in panel.status_label.text(), timeout=5000)
    assert target.read_text() == panel.preview.toPlainText()


def test_run_starts_a_real_job_and_shows_its_log(qtbot, panel: LaunchPanel, script: Path):
    pytest.importorskip("torch")
    panel.script_edit.setText(str(script))
    panel.procs_spin.setValue(2)
    with qtbot.waitSignal(panel.ctx.jobs.job_added, timeout=5000):
        panel.run_button.click()
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    job = panel.job
    assert job is not None
    # The end reaches the panel through a queued signal, after the process is gone.
    qtbot.waitUntil(lambda: job.outcome is not None, timeout=120000)
    qtbot.waitUntil(lambda: panel.status_label.text().startswith("Finished"), timeout=10000)
    assert panel.status_label.text().startswith("Finished (exit code 0)"), panel.status_label.text()
    qtbot.waitUntil(lambda: "sum 3.0" in panel.log.toPlainText(), timeout=5000)
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()


def test_a_run_can_be_cancelled(qtbot, panel: LaunchPanel, script: Path):
    pytest.importorskip("torch")
    panel.script_edit.setText(str(script))
    panel.args_edit.setText("hang")
    panel.procs_spin.setValue(2)
    panel.run_button.click()
    job = panel.job
    assert job is not None
    qtbot.waitUntil(lambda: "sum 3.0" in panel.log.toPlainText(), timeout=120000)
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: panel.status_label.text() == "Cancelled.", timeout=20000)
    assert not job.running
