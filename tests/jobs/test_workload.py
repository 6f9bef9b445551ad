"""The workload Python: environment records, registered interpreters, the active one."""

from __future__ import annotations

import json
import os
import sys

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.jobs import workload


def fake_env(name: str, **record: object):
    """A managed environment's folder and record, its interpreter this Python."""
    path = workload.envs_dir() / name
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").symlink_to(sys.executable)
    data = {"name": name, "created_at": 1.0, **record}
    (path / workload.RECORD).write_text(json.dumps(data), encoding="utf-8")
    return path


def test_records_give_each_env_its_job_variables():
    path = fake_env("rdna2", job_env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, torch_version="2.9")
    (workload.envs_dir() / "partial").mkdir()
    env = workload.env_for_python(str(path / "bin" / "python"))
    assert env is not None and env.name == "rdna2"
    assert env.job_env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert env.torch_version == "2.9"
    assert [e.name for e in workload.list_envs()] == ["rdna2"]
    assert workload.env_for_python("/somewhere/else") is None


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"torch_version": 7}, "torch_version is 7, not text"),
        ({"installed": 5}, "installed is 5, not a table of package versions"),
        ({"created_at": "abc"}, 'created_at is "abc", not a time'),
        ({"job_env": {"A": 1}}, 'job_env is {"A": 1}, not a table of variables'),
    ],
)
def test_a_damaged_record_is_never_used(record: dict[str, object], problem: str):
    """A record with a field of the wrong type is not half-trusted: no job runs in it."""
    path = fake_env("damaged", **record)
    assert workload.check_record(path) == problem
    assert workload.env_for_python(str(path / "bin" / "python")) is None
    assert workload.list_envs() == []


def test_a_fifo_record_is_reported_without_blocking(tmp_path):
    path = workload.envs_dir() / "fifo"
    path.mkdir(parents=True)
    os.mkfifo(path / workload.RECORD)
    assert workload.check_record(path) == (
        f"it could not be read ({path / workload.RECORD} is a FIFO (named pipe), "
        "not a regular file)"
    )
    assert workload.list_envs() == []


def test_registered_interpreters_and_activate():
    registered = workload.register_interpreter(sys.executable)
    assert workload.register_interpreter(sys.executable) == registered  # listed once
    assert workload.registered_interpreters() == [registered]
    with pytest.raises(PanelError):
        workload.register_interpreter("/no/such/python")
    path = fake_env("active-one", torch_version="2.12.0")
    python = str(path / "bin" / "python")
    settings = Settings.load()
    workload.activate(settings, python)
    assert Settings.load().general.workload_python == python
    kinds = [(i.managed, i.python, i.exists) for i in workload.interpreters()]
    assert kinds == [(True, python, True), (False, registered, True)]
    assert workload.interpreters()[0].label == "active-one (torch 2.12.0)"
