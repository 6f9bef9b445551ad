"""The GPUs jobs run on, in the main window: the status bar's GPU button shows the choice,
its menu changes it (saved in the settings), and a job the window launches sees the
chosen GPUs in its environment."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QLabel

from rocmpanel.base.settings import Settings
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.jobs import gpu_choice
from rocmpanel.jobs.spec import GPUS_VAR, JobSpec
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.main_window import MainWindow

REPORT_ENV = (
    "import json, os\n"
    "names = ('ROCR_VISIBLE_DEVICES', 'HIP_VISIBLE_DEVICES', 'CUDA_VISIBLE_DEVICES', "
    f"'{GPUS_VAR}')\n"
    "print(json.dumps({'event': 'result', 'data': {n: os.environ.get(n) for n in names}}))\n"
)


class AlphaTab(QLabel):
    title = "Alpha"

    def __init__(self, ctx, parent=None) -> None:
        super().__init__("alpha", parent)

    def shutdown(self) -> None:
        pass


def make_window(qtbot, monkeypatch, tmp_path: Path, kfd) -> MainWindow:
    """A window on a machine whose KFD topology has an integrated GPU first, then two
    discrete cards; the user's own HIP_VISIBLE_DEVICES is set (and must not leak)."""
    root = kfd.kfd_tree(tmp_path / "sys", kfd.RAPHAEL_IGPU, kfd.RX7900XTX, kfd.RX6900XT)
    monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(root))
    monkeypatch.delenv("ROCR_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    no_gpu = Inventory(SystemInfo("linux"))  # the inventory is not what the choice reads
    win = MainWindow(
        Settings.load(), tabs=(AlphaTab,), inventory=InventoryHolder(detector=lambda: no_gpu)
    )
    win.save_on_close = False
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.status_gpus.refreshed, timeout=10_000):
        win.status_gpus.refresh()  # read off the GUI thread
    return win


def run_report(qtbot, win: MainWindow, tmp_path: Path) -> dict[str, str | None]:
    worker = tmp_path / "report_env.py"
    worker.write_text(REPORT_ENV)
    job = win.jobs.start(JobSpec("report", worker, python=sys.executable))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    assert job.outcome is not None and job.outcome.result is not None, job.outcome
    return dict(job.outcome.result)


def menu_action(win: MainWindow, starts: str):
    win.status_gpus.menu_.aboutToShow.emit()
    actions = [a for a in win.status_gpus.menu_.actions() if a.text().startswith(starts)]
    assert len(actions) == 1, [a.text() for a in win.status_gpus.menu_.actions()]
    return actions[0]


def test_default_choice_leaves_the_integrated_gpu_out_of_the_job(
    qtbot, monkeypatch, tmp_path, kfd
) -> None:
    monkeypatch.delenv("HIP_VISIBLE_DEVICES", raising=False)
    win = make_window(qtbot, monkeypatch, tmp_path, kfd)
    assert win.status_gpus.text() == "GPUs: 1,2"
    assert "Left out by default (integrated): GPU 0" in win.status_gpus.toolTip()
    env = run_report(qtbot, win, tmp_path)
    assert env["ROCR_VISIBLE_DEVICES"] == "1,2"
    label = env[GPUS_VAR] or ""
    assert label.startswith("GPU 1 ") and ", GPU 2 " in label and "610M" not in label


def test_the_menu_choice_reaches_the_next_job_and_is_saved(
    qtbot, monkeypatch, tmp_path, kfd
) -> None:
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "0")  # the user's: the choice must replace it
    win = make_window(qtbot, monkeypatch, tmp_path, kfd)
    menu_action(win, "GPU 1 ").trigger()  # untick the RX 7900: GPU 2 alone is left
    assert win.status_gpus.text() == "GPU: 2"
    env = run_report(qtbot, win, tmp_path)
    assert env["ROCR_VISIBLE_DEVICES"] == "2"
    assert env["HIP_VISIBLE_DEVICES"] is None  # would count within the chosen GPUs
    assert env[GPUS_VAR] is not None and "0000:0c:00.0" in env[GPUS_VAR]
    qtbot.waitUntil(lambda: Settings.load().general.job_gpus == "0000:0c:00.0", timeout=5000)

    menu_action(win, "GPU 0 ").trigger()  # add the integrated GPU
    assert win.status_gpus.text() == "GPUs: 0,2"
    assert run_report(qtbot, win, tmp_path)["ROCR_VISIBLE_DEVICES"] == "0,2"

    menu_action(win, "All GPUs").trigger()
    assert run_report(qtbot, win, tmp_path)["ROCR_VISIBLE_DEVICES"] == "0,1,2"
    qtbot.waitUntil(lambda: Settings.load().general.job_gpus == "all", timeout=5000)


def test_the_last_chosen_gpu_cannot_be_unticked(qtbot, monkeypatch, tmp_path, kfd) -> None:
    win = make_window(qtbot, monkeypatch, tmp_path, kfd)
    menu_action(win, "GPU 1 ").trigger()
    menu_action(win, "GPU 2 ").trigger()  # the only one left: stays
    assert win.status_gpus.text() == "GPU: 2"
    assert "At least one GPU stays chosen" in win.statusBar().currentMessage()


def test_a_job_asking_for_its_own_gpus_gets_them(qtbot, monkeypatch, tmp_path, kfd) -> None:
    win = make_window(qtbot, monkeypatch, tmp_path, kfd)
    worker = tmp_path / "report_env.py"
    worker.write_text(REPORT_ENV)
    job = win.jobs.start(JobSpec("report", worker, python=sys.executable, gpus=("0000:73:00.0",)))
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    assert job.outcome is not None and job.outcome.result is not None
    assert job.outcome.result["ROCR_VISIBLE_DEVICES"] == "0"
