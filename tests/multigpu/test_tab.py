"""The Multi-GPU tab: its pages, and the line that says which GPUs jobs run on (no GPU,
one GPU, the default that leaves an integrated GPU out), refreshed when the choice
changes."""

from __future__ import annotations

import pytest

from rocmpanel.base.settings import Settings
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.gpu_picker import refresh_choice
from rocmpanel.jobs import gpu_choice
from rocmpanel.jobs.runner import JobManager
from rocmpanel.multigpu.views.tab import NO_GPU, ONE_GPU, MultiGpuTab


@pytest.fixture
def make_tab(qtbot, monkeypatch, tmp_path, kfd):
    def make(*gpus) -> MultiGpuTab:
        root = kfd.kfd_tree(tmp_path / "sys", *gpus) if gpus else tmp_path / "empty"
        monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(root))
        settings = Settings.load()
        jobs = JobManager(1.0)
        ctx = AppContext(settings, jobs, notify=lambda _m: None)
        tab = MultiGpuTab(ctx)
        qtbot.addWidget(tab)
        assert tab.where.text() == "Reading which GPUs jobs run on…"
        qtbot.waitUntil(lambda: ctx.gpu_choice.choice is not None, timeout=10_000)
        return tab

    return make


def _where(tab: MultiGpuTab) -> str:
    return tab.where.text()


def test_pages_and_no_gpu(make_tab) -> None:
    tab = make_tab()
    pages = [tab.pages.tabText(i) for i in range(tab.pages.count())]
    assert pages == ["&Topology", "&All-reduce test", "&Launch scripts"]
    assert "<b>no AMD GPU</b>" in _where(tab) and NO_GPU in _where(tab)
    tab.shutdown()


def test_one_gpu_and_the_integrated_one_left_out(qtbot, make_tab, kfd) -> None:
    tab = make_tab(kfd.RX7900XTX, kfd.RAPHAEL_IGPU)
    assert "Jobs run on: <b>GPU 0 " in _where(tab) and ONE_GPU in _where(tab)
    assert "Left out by default (integrated): GPU 1" in _where(tab)
    tab.ctx.settings.general.job_gpus = "all"
    refresh_choice(tab.ctx)  # as the GPU button does after a choice
    qtbot.waitUntil(lambda: "all 2 GPUs" in _where(tab), timeout=10_000)
    assert "<b>all 2 GPUs</b>" in _where(tab) and ONE_GPU not in _where(tab)
    tab.shutdown()
