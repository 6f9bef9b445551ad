"""Demo mode's machine: the bundled recording, the replayed timeline (exact values at given
times), the tree it becomes (the real detection reads it), and the temporary session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rocmpanel.machine import demo
from rocmpanel.machine.inventory import detect_inventory
from rocmpanel.setup.compat import verdict_for

T0 = 1_800_000_000.0  # a multiple of the 180 s cycle: phase 0 for the first GPU


@pytest.fixture(scope="module")
def recording() -> demo.Recording:
    return demo.load_recording()


def test_the_bundled_recording_names_two_gpus_and_their_sources(recording) -> None:  # type: ignore[no-untyped-def]
    assert [g.pci_id for g in recording.gpus] == ["1002:744c", "1002:73bf"]
    assert [g.slot for g in recording.gpus] == ["0000:03:00.0", "0000:0c:00.0"]
    assert all("amdgpu-sysfs-rs" in g.source for g in recording.gpus)
    assert recording.rocm_version == "7.2.0"
    first, second = recording.gpus
    assert first.vram_total == 20 * 1024**3 and second.vram_total == 17163091968
    assert [t.label for t in first.temps] == ["edge", "junction", "mem"]
    assert [t.crit_mc for t in first.temps] == [100000, 110000, 108000]
    assert first.sclk_levels_mhz == (500, 31, 2219)
    assert second.power_cap_uw == 289000000


def test_the_recording_matches_the_recorded_trees(shared_fixtures: Path) -> None:
    """The bundled file is what the script makes from the recorded trees (not edited)."""
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "scripts" / "make_demo_recording.py"
    spec = importlib.util.spec_from_file_location("make_demo_recording", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.build(shared_fixtures / "sysfs")
    bundled = json.loads((script.parents[1] / "resources" / "demo" / "recording.json").read_text())
    assert made == bundled


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"gpus": [{"name": "x"}], "rocm_version": "7.2.0"}', "no field 'source'"),
        ("not json", "Expecting value: line 1 column 1 (char 0)"),
        ('{"gpus": [], "rocm_version": "7.2.0"}', None),
        ('{"gpus": "x", "rocm_version": "7.2.0"}', "string indices must be integers"),
    ],
)
def test_a_damaged_recording_is_one_sentence_with_the_fix(text: str, why: str | None) -> None:
    with pytest.raises(ValueError) as raised:
        demo.load_recording(text)
    if why is None:
        assert str(raised.value) == (
            "demo/recording.json lists no GPU; reinstalling rocmpanel restores it"
        )
    else:
        assert str(raised.value).startswith(f"demo/recording.json is damaged ({why}")
        assert str(raised.value).endswith("); reinstalling rocmpanel restores it")


def test_a_number_too_large_is_refused_not_a_traceback(recording) -> None:  # type: ignore[no-untyped-def]
    raw = json.loads(demo.read_resource(demo.RECORDING))
    raw["gpus"][0]["vram_total"] = 1e999  # json reads it as inf: int() overflows
    with pytest.raises(ValueError, match=r"^demo/recording.json is damaged \(cannot convert"):
        demo.load_recording(json.dumps(raw))


def test_a_session_that_cannot_build_its_tree_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(demo, "build_tree", full)
    with pytest.raises(OSError):
        demo.DemoSession(base=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("offset", "busy", "vram", "temps", "power", "sclk", "mclk", "fan"),
    [
        (0.0, 2, 858992640, (53000, 61000, 68000), 72000000, 31, 96, 0),  # idle
        (30.0, 35, 7516192768, (59000, 67000, 72000), 142000000, 500, 456, 170),  # loading
        (45.0, 97, 14173388800, (67000, 76000, 78000), 272000000, 2219, 1249, 940),  # burst
        (50.0, 12, 14173388800, (64000, 73000, 76000), 93000000, 500, 456, 680),  # pause
        (152.0, 2, 8847630336, (62000, 71000, 74000), 72000000, 31, 96, 510),  # unloading
        (179.0, 2, 858992640, (53000, 61000, 68000), 72000000, 31, 96, 0),  # cooled down
    ],
)
def test_the_timeline_gives_exact_values(  # type: ignore[no-untyped-def]
    recording, offset, busy, vram, temps, power, sclk, mclk, fan
) -> None:
    gpu = recording.gpus[0]
    state = demo.state_at(gpu, 0, T0 + offset)
    assert state.busy_percent == busy
    assert state.vram_used == vram
    assert state.temps_mc == temps
    assert state.power_uw == power
    assert gpu.sclk_levels_mhz[state.sclk_level] == sclk
    assert gpu.mclk_levels_mhz[state.mclk_level] == mclk
    assert state.fan_rpm == fan
    assert state == demo.state_at(gpu, 0, T0 + offset)  # a function of time only


def test_the_second_gpu_runs_a_third_of_a_cycle_later(recording) -> None:  # type: ignore[no-untyped-def]
    assert demo.load_at(T0 + 45.0, 0) == 0.97
    assert demo.load_at(T0 + 45.0 + 60.0, 1) == 0.97
    assert demo.load_at(T0 + 45.0, 1) == 0.02


def test_the_tree_is_detected_as_two_gpus_with_exact_targets(tmp_path: Path, recording) -> None:  # type: ignore[no-untyped-def]
    demo.build_tree(tmp_path, recording, T0)
    inventory = detect_inventory({}, sysfs_root=tmp_path)
    assert [(g.gfx, g.bdf, g.vram_bytes, g.kfd_node) for g in inventory.gpus] == [
        ("gfx1100", "0000:03:00.0", 20 * 1024**3, 1),
        ("gfx1030", "0000:0c:00.0", 17163091968, 2),
    ]
    assert inventory.system.driver == "amdgpu"
    assert inventory.live is False
    table = (tmp_path / "class/drm/card0/device/pp_dpm_sclk").read_text()
    assert table == "0: 500Mhz\n1: 31Mhz *\n2: 2219Mhz\n"


def test_the_demo_inventory_has_the_recordings_rocm_and_two_verdicts(
    tmp_path: Path, recording
) -> None:  # type: ignore[no-untyped-def]
    demo.build_tree(tmp_path, recording, T0)
    inventory = demo.detect_demo_inventory(tmp_path, recording)
    assert inventory.system.rocm_version == "7.2.0"
    assert inventory.system.os_version is not None and "demo" in inventory.system.os_version
    statuses = [verdict_for(g, "linux", "7.2.0").status.value for g in inventory.gpus]
    assert statuses == ["supported", "limited"]


def test_the_replay_writes_the_state_of_its_clock(tmp_path: Path, recording) -> None:  # type: ignore[no-untyped-def]
    demo.build_tree(tmp_path, recording, T0)
    replay = demo.DemoReplay(tmp_path, recording, period_s=60.0, clock=lambda: T0 + 45.0)
    replay.start()
    try:
        busy = (tmp_path / "class/drm/card0/device/gpu_busy_percent").read_text()
        assert busy == "97\n"
    finally:
        replay.stop()
    assert not replay._thread.is_alive()


def test_a_session_uses_its_own_home_and_removes_it(tmp_path: Path) -> None:
    session = demo.DemoSession(base=tmp_path)
    env = session.environ()
    try:
        assert env["ROCMPANEL_HOME"] == str(session.folder / "home")
        assert Path(env["ROCMPANEL_HOME"]).is_dir()
        assert Path(env["ROCMPANEL_SYSFS_ROOT"], "class/drm/card1/device/uevent").is_file()
        assert os.listdir(env["ROCMPANEL_PROC_ROOT"]) == []
        assert env["ROCMPANEL_HOME"] != os.environ["ROCMPANEL_HOME"]
    finally:
        session.close()
    assert not session.folder.exists()
    assert list(tmp_path.iterdir()) == []
