"""What environment a job runs with: managed env, then session store, then the job's own
(on Windows the new registry values first: tests/envvars/stores/test_windows_env.py)."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.paths import data_dir
from rocmpanel.base.settings import Settings
from rocmpanel.envvars.stores import windows
from rocmpanel.envvars.stores.session import session_file
from rocmpanel.jobs import presets, workload
from rocmpanel.jobs.job_env import DATA_DIR_VAR, job_env_for
from rocmpanel.jobs.presets import HEADER_VAR, NO_PRESET, Item, Preset, PresetStore
from rocmpanel.jobs.spec import JobSpec


def test_session_store_then_spec(monkeypatch) -> None:
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    path = session_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"variables": {"A": "session", "B": "session"}}))
    env = job_env_for(JobSpec("x", "probe", python=sys.executable, env={"B": "spec"}))
    assert env == {"A": "session", "B": "spec"}


def test_managed_env_variables_come_first(monkeypatch) -> None:
    from types import SimpleNamespace

    managed = SimpleNamespace(job_env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "A": "managed"})
    monkeypatch.setattr(workload, "env_for_python", lambda python: managed)
    monkeypatch.setattr(
        "rocmpanel.jobs.job_env.job_env_overrides", lambda base, platform: {"A": "session"}
    )
    env = job_env_for(JobSpec("x", "probe", python="/envs/t/bin/python"))
    assert env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "A": "session"}


def _session(variables: dict[str, str]) -> None:
    path = session_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"variables": variables}))


def test_names_are_one_variable_whatever_their_case_on_windows(monkeypatch, fake_registry) -> None:
    windows.forget_changes()  # nothing changed in HKCU\Environment by this process
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    monkeypatch.setenv("PATH", "C:\\Windows")
    _session({"Path": "C:\\rocm\\bin;%PATH%", "hip_visible_devices": "1"})
    spec = JobSpec("x", "probe", env={"HIP_VISIBLE_DEVICES": "0"})
    assert job_env_for(spec, platform="win32", registry=fake_registry) == {
        "Path": "C:\\rocm\\bin;C:\\Windows",
        "HIP_VISIBLE_DEVICES": "0",
    }


def test_names_keep_their_case_on_linux(monkeypatch) -> None:
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    monkeypatch.setenv("PATH", "/usr/bin")
    _session({"PATH": "/opt/rocm/bin:$PATH", "hip_visible_devices": "1"})
    spec = JobSpec("x", "probe", env={"HIP_VISIBLE_DEVICES": "0"})
    assert job_env_for(spec, platform="linux") == {
        "PATH": "/opt/rocm/bin:/usr/bin",
        "hip_visible_devices": "1",
        "HIP_VISIBLE_DEVICES": "0",
    }


# -- the tuning preset a job runs under ---------------------------------------------------


def _mine(**changes: object) -> Preset:
    """A user preset with an env variable, a Linux-only one and a torch setting."""
    fields: dict[str, object] = {
        "id": "mine",
        "name": "Mine",
        "env": (
            Item("env", "A", "preset"),
            Item("env", "B", "preset"),
            Item("env", "MIOPEN_FIND_MODE", "FAST", platforms=("linux",)),
        ),
        "torch": (Item("torch", "float32_matmul_precision", "high"),),
    }
    fields.update(changes)
    return Preset(**fields)  # type: ignore[arg-type]


@pytest.fixture
def saved_preset(monkeypatch: pytest.MonkeyPatch) -> Preset:
    """``_mine`` saved in the user's preset store (tmp HOME); no managed env."""
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    return PresetStore().save(_mine())


HEADER = {"id": "mine", "name": "Mine", "torch": {"float32_matmul_precision": "high"}}


def test_a_preset_sits_between_managed_env_and_session_store(monkeypatch, saved_preset) -> None:
    from types import SimpleNamespace

    managed = SimpleNamespace(job_env={"A": "managed", "M": "managed"})
    monkeypatch.setattr(workload, "env_for_python", lambda python: managed)
    _session({"B": "session"})
    spec = JobSpec("x", "probe", python="/envs/t/bin/python", env={"C": "spec"})
    env = job_env_for(spec, platform="linux", active="mine")
    header = env.pop(HEADER_VAR)
    assert json.loads(header or "") == HEADER
    # The preset wins over the managed env; the user's session variable over the preset.
    assert env == {
        "A": "preset",
        "M": "managed",
        "B": "session",
        "MIOPEN_FIND_MODE": "FAST",
        "C": "spec",
    }


def test_a_preset_item_for_linux_only_is_left_out_on_windows(saved_preset, fake_registry) -> None:
    windows.forget_changes()
    env = job_env_for(
        JobSpec("x", "probe"), platform="win32", registry=fake_registry, active="mine"
    )
    assert {k: v for k, v in env.items() if k != HEADER_VAR} == {"A": "preset", "B": "preset"}


def test_no_preset_when_the_job_asks_for_none(saved_preset) -> None:
    env = job_env_for(JobSpec("x", "probe", preset=NO_PRESET), platform="linux", active="mine")
    assert env == {}


def test_no_preset_when_none_is_active(saved_preset) -> None:
    assert job_env_for(JobSpec("x", "probe"), platform="linux", active="") == {}


def test_a_job_may_name_its_preset(saved_preset) -> None:
    env = job_env_for(JobSpec("x", "probe", preset="mine"), platform="linux", active="")
    assert json.loads(env[HEADER_VAR] or "") == HEADER and env["A"] == "preset"


def test_the_active_preset_is_read_from_the_saved_settings(saved_preset) -> None:
    settings = Settings.load()
    settings.general.active_preset = "mine"
    settings.save()
    env = job_env_for(JobSpec("x", "probe"), platform="linux")
    assert json.loads(env[HEADER_VAR] or "") == HEADER
    # What the caller passes wins over the file (the panel's in-memory value).
    assert job_env_for(JobSpec("x", "probe"), platform="linux", active="") == {}


def test_an_active_preset_that_is_gone_runs_the_job_without(saved_preset, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        env = job_env_for(JobSpec("x", "probe"), platform="linux", active="deleted-one")
    assert env == {}
    assert "deleted-one" in caplog.text


def test_an_unknown_preset_the_job_names_stops_it(saved_preset) -> None:
    with pytest.raises(PanelError) as caught:
        job_env_for(JobSpec("x", "probe", preset="deleted-one"), platform="linux", active="")
    assert "deleted-one" in str(caught.value)


def test_a_broken_preset_store_never_stops_a_job_under_the_active_preset(
    monkeypatch, saved_preset, caplog
) -> None:
    def broken(ident: str | None, active: str, store: object = None) -> None:
        raise OSError("presets folder unreadable")

    monkeypatch.setattr(presets, "resolve", broken)
    with caplog.at_level(logging.WARNING):
        assert job_env_for(JobSpec("x", "probe"), platform="linux", active="mine") == {}
    assert (
        "The tuning presets could not be read (presets folder unreadable); running without one."
        in caplog.text
    )
    with pytest.raises(PanelError) as caught:
        job_env_for(JobSpec("x", "probe", preset="mine"), platform="linux", active="")
    assert str(caught.value) == "Could not read the tuning preset 'mine': presets folder unreadable"


def test_a_settings_file_that_cannot_be_read_means_no_preset(
    monkeypatch, saved_preset, caplog
) -> None:
    def broken(*args: object, **kwargs: object) -> Settings:
        raise PanelError("settings.yaml is damaged")

    monkeypatch.setattr(Settings, "load", broken)
    with caplog.at_level(logging.WARNING):
        assert job_env_for(JobSpec("x", "probe"), platform="linux") == {}
    assert (
        "Could not read the active tuning preset (settings.yaml is damaged); running without one."
        in caplog.text
    )


def test_a_tunableop_preset_tells_the_worker_the_data_dir(monkeypatch) -> None:
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    tunable = Item("torch", "tunableop", {"enabled": True, "tuning": True})
    PresetStore().save(_mine(env=(), torch=(tunable,)))
    env = job_env_for(JobSpec("x", "probe"), platform="linux", active="mine")
    assert env[DATA_DIR_VAR] == str(data_dir())
    assert json.loads(env[HEADER_VAR] or "")["torch"] == {
        "tunableop": {"enabled": True, "tuning": True}
    }


def _settings_never_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make Settings.load record each call (and fail the job's preset if it is used)."""
    calls: list[str] = []

    def load(*args: object, **kwargs: object) -> Settings:
        calls.append("load")
        raise PanelError("settings.yaml must not be read here")

    monkeypatch.setattr(Settings, "load", load)
    return calls


@pytest.mark.parametrize("preset", ["mine", NO_PRESET])
def test_a_job_naming_its_preset_never_reads_the_settings_file(
    monkeypatch, saved_preset, preset: str
) -> None:
    calls = _settings_never_read(monkeypatch)
    env = job_env_for(JobSpec("x", "probe", preset=preset), platform="linux")
    assert calls == []
    assert ("A" in env) is (preset == "mine")


def test_the_settings_file_is_read_once_for_a_job_under_the_active_preset(
    monkeypatch, saved_preset
) -> None:
    calls = _settings_never_read(monkeypatch)
    assert job_env_for(JobSpec("x", "probe"), platform="linux", active="mine")["A"] == "preset"
    assert calls == []  # the caller said which preset is active
    assert job_env_for(JobSpec("x", "probe"), platform="linux") == {}
    assert calls == ["load"]
