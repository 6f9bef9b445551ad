"""What environment a job runs with: managed env, then session store, then the job's own."""

from __future__ import annotations

import json
import sys

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
    monkeypatch.setattr("rocmpanel.jobs.job_env.job_env_overrides", lambda: {"A": "session"})
    env = job_env_for(JobSpec("x", "probe", python="/envs/t/bin/python"))
    assert env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "A": "session"}
