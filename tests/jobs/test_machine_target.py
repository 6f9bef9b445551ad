"""presets.machine_target: the one machine both the CLI and the views judge effects on."""

from __future__ import annotations

import pytest

from rocmpanel.jobs.presets import Target, machine_target
from rocmpanel.machine.gpu_model import GpuInfo

IGPU = GpuInfo("Radeon 780M", gfx="gfx1103", integrated=True)
DGPU = GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", integrated=False)
NO_GFX = GpuInfo("Radeon (not seen by ROCm)", gfx=None, integrated=False)
UNKNOWN_KIND = GpuInfo("Radeon PRO W7900", gfx="gfx1100", integrated=None)


@pytest.mark.parametrize(
    ("gpus", "gfx"),
    [
        ((IGPU, DGPU), "gfx1100"),  # the laptop whose iGPU is listed first
        ((DGPU, IGPU), "gfx1100"),
        ((NO_GFX, IGPU, DGPU), "gfx1100"),  # a discrete GPU without a gfx is skipped
        ((IGPU, UNKNOWN_KIND), "gfx1100"),  # not known to be integrated: counts as discrete
        ((IGPU,), "gfx1103"),  # an APU alone: jobs run on it
        ((NO_GFX, IGPU), "gfx1103"),
        ((NO_GFX,), None),
        ((), None),
    ],
)
def test_the_first_discrete_gpu_with_a_gfx(gpus: tuple[GpuInfo, ...], gfx: str | None) -> None:
    assert machine_target(gpus, platform="linux") == Target("linux", gfx, None, None)


def test_the_torch_and_hip_versions() -> None:
    target = machine_target(
        [DGPU], torch_version="2.13.0+rocm7.2", hip_version="7.2.41134-65d174c3e", platform="linux"
    )
    assert target == Target("linux", "gfx1100", "2.13.0+rocm7.2", "7.2")
    assert machine_target([DGPU], "", "", "windows") == Target("windows", "gfx1100", None, None)


@pytest.mark.parametrize(("sys_platform", "platform"), [("win32", "windows"), ("linux", "linux")])
def test_the_platform_defaults_to_this_one(
    monkeypatch: pytest.MonkeyPatch, sys_platform: str, platform: str
) -> None:
    monkeypatch.setattr("rocmpanel.jobs.preset_effects.sys.platform", sys_platform)
    assert machine_target([]).platform == platform
