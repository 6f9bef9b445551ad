"""About shows the probe Setup already ran (``ctx.probe_result``) instead of probing again,
and "Not probed yet." before any probe."""

from __future__ import annotations

import pytest

from rocmpanel.base.settings import Settings
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import HostFacts, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.shell.about import NOT_PROBED, AboutDialog

PROBE = {
    "python_version": "3.12.3",
    "python_executable": "/home/a/envs/rocm/bin/python",
    "system": "Linux",
    "torch_imported": True,
    "torch_version": "2.9.1+rocm6.4",
    "torch_hip": "6.4.43484",
    "torch_cuda": None,
    "build": "rocm",
    "cuda_available": True,
    "devices": [
        {
            "index": 0,
            "name": "AMD Radeon RX 7900 XTX",
            "total_memory_bytes": 24 * 2**30,
            "gcn_arch_name": "gfx1100",
            "gfx": "gfx1100",
        }
    ],
}


@pytest.fixture
def ctx():
    jobs = JobManager()
    context = AppContext(settings=Settings.load(), jobs=jobs)
    context.inventory.set_current(Inventory(SystemInfo(os="linux"), HostFacts()))
    yield context
    jobs.shutdown()


def test_about_shows_the_probe_setup_ran_without_a_new_one(qtbot, ctx: AppContext) -> None:
    ctx.probe_result.set(PROBE, "/home/a/envs/rocm/bin/python")
    about = AboutDialog(ctx)
    qtbot.addWidget(about)
    assert about.probe.job is None  # no probe was started
    assert about.probe.python_label.text() == "Interpreter: /home/a/envs/rocm/bin/python"
    assert about.probe.output.toPlainText() == (
        "Python 3.12.3 at /home/a/envs/rocm/bin/python\n"
        "torch 2.9.1+rocm6.4: ROCm/HIP 6.4.43484 build\n"
        "GPUs visible to torch: 1\n"
        "  [0] AMD Radeon RX 7900 XTX  gfx1100  24.0 GiB"
    )


def test_about_says_not_probed_yet_and_follows_a_later_probe(qtbot, ctx: AppContext) -> None:
    about = AboutDialog(ctx)
    qtbot.addWidget(about)
    assert about.probe.job is None
    assert about.probe.output.toPlainText() == ""
    assert about.probe.output.placeholderText() == NOT_PROBED == "Not probed yet."
    ctx.probe_result.set({**PROBE, "torch_imported": False, "errors": []}, "/usr/bin/python3")
    assert about.probe.python_label.text() == "Interpreter: /usr/bin/python3"
    assert about.probe.output.toPlainText() == (
        "Python 3.12.3 at /home/a/envs/rocm/bin/python\n"
        "torch: not importable (torch is not installed)"
    )


def test_about_in_the_demo_probes_nothing(qtbot, ctx: AppContext) -> None:
    from rocmpanel.setup.views.probe_box import DEMO_NOT_PROBED

    ctx.demo = True
    about = AboutDialog(ctx)
    qtbot.addWidget(about)
    assert not about.probe.button.isEnabled()
    assert about.probe.output.placeholderText() == DEMO_NOT_PROBED
    about.probe.start_probe()
    assert about.probe.job is None and ctx.jobs.jobs == []
