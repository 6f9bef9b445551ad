"""Managed environments: names, disk check, and what discard/remove may delete."""

from __future__ import annotations

import json
import sys

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.pytorch import managed_envs


def _finished(name: str):
    ticket = managed_envs.begin_install(name, ["x"], needed_bytes=1, torch_version="2.12")
    (ticket.path / "bin").mkdir(parents=True)
    (ticket.path / "bin" / "python").symlink_to(sys.executable)
    return ticket, managed_envs.finish_install(ticket, {"installed": {"torch": "2.12.0"}})


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "x" * 65, "spaces here", "../up"])
def test_bad_names_are_refused(name: str):
    with pytest.raises(PanelError):
        managed_envs.check_name(name)


def test_free_disk_check_says_how_much():
    with pytest.raises(PanelError, match="needs about"):
        managed_envs.begin_install("big", ["torch"], needed_bytes=10**18)
    assert not (managed_envs.envs_dir() / "big").exists()


def test_finished_env_is_listed_and_never_discarded():
    ticket, env = _finished("one")
    assert [e.name for e in managed_envs.list_envs()] == ["one"]
    assert env.installed == {"torch": "2.12.0"} and env.torch_version == "2.12.0"
    managed_envs.discard(ticket)
    assert env.path.exists()
    with pytest.raises(PanelError, match="already exists"):
        managed_envs.begin_install("one", ["x"])
    assert managed_envs.unique_name("one") == "one-2"


def test_partial_dirs_are_hidden_and_cleanable():
    partial = managed_envs.envs_dir() / "half"
    partial.mkdir(parents=True)
    _finished("whole")
    assert [e.name for e in managed_envs.list_envs()] == ["whole"]
    assert managed_envs.remove_partial() == [partial]
    assert not partial.exists() and managed_envs.find_env("whole") is not None


def test_registered_interpreters_and_activate():
    registered = managed_envs.register_interpreter(sys.executable)
    assert managed_envs.registered_interpreters() == [registered]
    with pytest.raises(PanelError):
        managed_envs.register_interpreter("/no/such/python")
    _, env = _finished("active-one")
    settings = Settings.load()
    managed_envs.activate(settings, str(env.python))
    assert Settings.load().general.workload_python == str(env.python)
    kinds = [(i.managed, i.python) for i in managed_envs.interpreters()]
    assert kinds == [(True, str(env.python)), (False, registered)]
    data = managed_envs.record_dict(env)
    assert json.loads(json.dumps(data))["name"] == "active-one"
