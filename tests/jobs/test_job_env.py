"""What environment a job runs with: managed env, then session store, then the job's own
(on Windows the new registry values first: tests/envvars/stores/test_windows_env.py)."""

from __future__ import annotations

import json
import sys

from rocmpanel.envvars.stores import windows
from rocmpanel.envvars.stores.session import session_file
from rocmpanel.jobs import workload
from rocmpanel.jobs.job_env import job_env_for
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
