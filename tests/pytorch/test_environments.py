"""Managed environments' life: names, disk check, and what discard/remove may delete."""

from __future__ import annotations

import sys

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import workload
from rocmpanel.pytorch import environments


def finished(name: str):
    """A finished install whose interpreter is this Python; (ticket, environment)."""
    ticket = environments.begin_install(name, ["x"], needed_bytes=1, torch_version="2.12")
    (ticket.path / "bin").mkdir(parents=True)
    (ticket.path / "bin" / "python").symlink_to(sys.executable)
    return ticket, environments.finish_install(ticket, {"installed": {"torch": "2.12.0"}})


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "x" * 65, "spaces here", "../up"])
def test_bad_names_are_refused(name: str):
    with pytest.raises(PanelError):
        environments.check_name(name)


def test_free_disk_check_says_how_much():
    with pytest.raises(PanelError, match="needs about"):
        environments.begin_install("big", ["torch"], needed_bytes=10**18)
    assert not (workload.envs_dir() / "big").exists()


def test_finished_env_is_listed_and_never_discarded():
    ticket, env = finished("one")
    assert [e.name for e in workload.list_envs()] == ["one"]
    assert env.installed == {"torch": "2.12.0"} and env.torch_version == "2.12.0"
    environments.discard(ticket)
    assert env.path.exists()
    with pytest.raises(PanelError, match="already exists"):
        environments.begin_install("one", ["x"])
    assert environments.unique_name("one") == "one-2"


def test_partial_dirs_are_hidden_and_cleanable():
    partial = workload.envs_dir() / "half"
    partial.mkdir(parents=True)
    finished("whole")
    assert [e.name for e in workload.list_envs()] == ["whole"]
    assert environments.remove_partial() == [partial]
    assert not partial.exists() and workload.find_env("whole") is not None


def test_remove_deletes_only_that_environment():
    _, one = finished("one")
    _, two = finished("two")
    assert environments.remove_env("one").name == "one"
    assert not one.path.exists() and two.path.exists()
    with pytest.raises(PanelError, match="No managed environment"):
        environments.remove_env("one")
