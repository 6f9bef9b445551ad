"""The Chat tab on a workload Python without torch (a real venv, a real worker): what is
missing is named before a load, a load that fails anyway ends the worker and leaves the
tab idle with the cause and its fix; and the transcript marks a change of model."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import Settings
from rocmpanel.chat.protocol import LoadRequest
from rocmpanel.chat.session import SessionState
from rocmpanel.chat.views import model_panel
from rocmpanel.chat.views.check_summary import ERROR_COLOUR, coloured
from rocmpanel.chat.views.packages_box import INSTALL_WITHOUT_TORCH_TEXT
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.process import JobState
from rocmpanel.jobs.protocol import ReplyDone, Result
from rocmpanel.jobs.runner import JobManager

TORCH_FIX = (
    "PyTorch is not installed in the workload Python: install PyTorch from the PyTorch tab "
    "(its plan picks the build for this GPU)."
)
OTHERS = "It also lacks transformers, accelerate, safetensors, tokenizers."


@pytest.fixture
def make_tab(qtbot, monkeypatch: pytest.MonkeyPatch, fake_check, tmp_path: Path):
    """A Chat tab whose workload Python is ``python`` and whose folder check is faked (the
    worker still checks the folder: a config.json and a .safetensors file are there)."""
    from rocmpanel.chat.views.tab import ChatTab

    monkeypatch.setattr(model_panel, "check_model", fake_check)
    folder = tmp_path / "tiny-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    tabs: list[ChatTab] = []
    installs: list[str] = []

    def make(python: str, *, installer: bool = False) -> ChatTab:
        settings = Settings.load()
        settings.general.workload_python = python
        ctx = AppContext(settings, JobManager(grace_s=1.0), lambda _message: None)
        if installer:
            ctx.install_packages = installs.append
        tab = ChatTab(ctx)
        tab.installs = installs  # type: ignore[attr-defined]
        qtbot.addWidget(tab)
        panel = tab.model_panel
        with qtbot.waitSignal(panel.check_finished, timeout=10_000):
            panel.set_folder(str(folder))
        panel.device_combo.setCurrentIndex(panel.device_combo.findData(Device.CPU.value))
        panel.set_precision(Precision.FP32)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        tab.shutdown()


def test_load_names_what_is_missing_and_starts_no_worker(
    qtbot, make_tab, python_without_torch: str
) -> None:
    tab = make_tab(python_without_torch, installer=True)
    panel, box = tab.model_panel, tab.model_panel.packages_box
    with qtbot.waitSignal(box.checked, timeout=30_000) as checked:
        qtbot.mouseClick(panel.load_button, Qt.MouseButton.LeftButton)
    assert checked.args == [False]
    assert tab.job is None and tab.ctx.jobs.jobs == []  # no worker was started
    problem = (
        f"The chat cannot load a model yet. {TORCH_FIX} {OTHERS} "
        "The install button below installs them."
    )
    assert box.label.text() == problem
    assert panel.status_label.text() == coloured(problem, ERROR_COLOUR)
    assert panel.load_button.isEnabled()
    # torch comes from the PyTorch tab: the button says so, and installs the "llm" profile.
    assert not box.install_button.isHidden()
    assert box.install_button.text() == INSTALL_WITHOUT_TORCH_TEXT
    qtbot.mouseClick(box.install_button, Qt.MouseButton.LeftButton)
    assert tab.installs == ["llm"]
    # NF4 also needs bitsandbytes (4-bit on the CPU from 0.47).
    panel.set_precision(Precision.NF4)
    assert box.label.text() == (
        f"The chat cannot load a model yet. {TORCH_FIX} It also lacks transformers, "
        "accelerate, safetensors, tokenizers, bitsandbytes. The install button below "
        "installs them."
    )


def test_without_an_install_hook_the_button_is_hidden(
    qtbot, make_tab, python_without_torch: str
) -> None:
    tab = make_tab(python_without_torch)
    box = tab.model_panel.packages_box
    with qtbot.waitSignal(box.checked, timeout=30_000):
        box.refresh()
    assert box.install_button.isHidden()
    assert box.label.text().endswith(f"{OTHERS} Install them into the workload Python.")


def test_an_install_ending_checks_the_packages_again(
    qtbot, make_tab, python_without_torch: str
) -> None:
    from types import SimpleNamespace

    tab = make_tab(python_without_torch, installer=True)
    box = tab.model_panel.packages_box
    with qtbot.waitSignal(box.checked, timeout=30_000):
        box.refresh()
    with qtbot.assertNotEmitted(box.checked, wait=200):  # another job: nothing to check
        tab.ctx.jobs.job_finished.emit(SimpleNamespace(spec=SimpleNamespace(worker="probe")))
    with qtbot.waitSignal(box.checked, timeout=30_000) as checked:
        tab.ctx.jobs.job_finished.emit(SimpleNamespace(spec=SimpleNamespace(worker="pip_install")))
    assert checked.args == [False]


def test_the_panels_own_python_has_everything(qtbot, make_tab) -> None:
    pytest.importorskip("transformers")
    tab = make_tab("")
    box = tab.model_panel.packages_box
    with qtbot.waitSignal(box.checked, timeout=30_000) as checked:
        box.refresh()
    assert checked.args == [True] and box.label.isHidden() and box.install_button.isHidden()


def test_a_failed_load_ends_the_worker_and_returns_the_tab_to_idle(
    qtbot, make_tab, python_without_torch: str
) -> None:
    tab = make_tab(python_without_torch)
    panel = tab.model_panel
    # A load asked for anyway (e.g. torch was removed after the last check); the fake 7B
    # model would not fit in RAM at fp32, and the tab would ask first.
    panel.verdict = None
    tab.load_model(panel.load_request())
    job = tab.job
    assert job is not None and tab.session.loading
    with qtbot.waitSignal(job.finished, timeout=30_000) as finished:
        pass
    outcome = finished.args[0]
    assert not job.running and job.outcome is outcome
    assert outcome.state is JobState.FAILED and outcome.exit_code == 3
    assert outcome.error is not None and outcome.error.kind == "missing_package"
    assert outcome.error.data["missing"] == ["torch"]
    assert outcome.message == (
        "This Python lacks torch (ModuleNotFoundError: No module named 'torch')."
    )
    message = f"The model was not loaded. {TORCH_FIX}"
    assert tab.session.state is SessionState.FAILED and tab.session.worker is None
    assert not tab.session.loading
    assert tab.banner.isVisibleTo(tab) and tab.banner_label.text() == message
    assert tab.banner.reload_button.isHidden()  # reloading cannot help until torch is there
    assert panel.status_label.text() == coloured(message, ERROR_COLOUR)
    assert tab.live_label.text() == "No model loaded."
    assert panel.load_button.isEnabled() and panel.progress.isHidden()
    assert panel.browse_button.isEnabled() and not panel.unload_button.isEnabled()
    # The package check that follows the failure names everything missing.
    qtbot.waitUntil(lambda: panel.packages_box.installed is not None, timeout=30_000)
    assert panel.packages_box.label.text().startswith(
        f"The chat cannot load a model yet. {TORCH_FIX}"
    )


class FakeWorker:
    """A worker channel that takes commands and stays running."""

    running = True

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, op: str, **_fields: object) -> None:
        self.sent.append(op)


def loaded(tab, path: str) -> None:
    """Play a load of ``path`` through the session, as the worker would answer it."""
    tab.session.load(LoadRequest(path, Precision.FP32, Device.CPU, 512))
    tab._on_job_result(
        Result({"kind": "loaded", "path": path, "precision": "fp32", "device": "cpu",
                "device_name": "CPU", "parameters": 1, "context_length": 512, "load_s": 0.1,
                "memory_bytes": 1, "memory_kind": "rss"})
    )  # fmt: skip


def test_a_model_change_mid_conversation_is_marked(qtbot, make_tab) -> None:
    tab = make_tab("")
    worker = FakeWorker()
    tab.session.use_worker(worker, False)
    loaded(tab, "/models/first")
    assert tab.view.markers == []  # nothing to mark before the first message
    tab.send_message("Hello")
    assert worker.sent == ["load", "generate"]
    tab._on_job_reply(ReplyDone(tab.session.request_id, "Hi!", {"new_tokens": 1}))
    assert tab.session.history == [("user", "Hello"), ("assistant", "Hi!")]
    loaded(tab, "/models/first")
    assert tab.view.markers == []  # the same model again: no change
    loaded(tab, "/models/second")
    assert [(pos, label.text()) for pos, label in tab.view.markers] == [
        (2, "— Model changed to second —")
    ]
    tab.view.truncate(1)  # the messages before it go, and the marker with them
    assert tab.view.markers == []
    tab.new_chat()
    loaded(tab, "/models/third")
    assert tab.view.markers == [] and tab.chat_model == "/models/third"
