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


def test_free_disk_figures_are_in_decimal_download_units(monkeypatch):
    from types import SimpleNamespace

    usage = SimpleNamespace(total=10**12, used=10**12 - 950_000_000, free=950_000_000)
    monkeypatch.setattr(environments.shutil, "disk_usage", lambda _path: usage)
    with pytest.raises(PanelError, match=r"needs about 2\.8 GB, 950\.0 MB is free"):
        environments.begin_install("big", ["torch"], needed_bytes=2_800_000_000)


def test_an_install_still_running_is_not_cleaned_up():
    ticket = environments.begin_install("busy", ["x"])  # this process installs it
    ticket.path.mkdir()  # the worker has started filling it
    assert environments.install_running("busy")
    assert environments.remove_partial() == []
    assert ticket.path.exists()
    environments.discard(ticket)
    assert not ticket.path.exists() and not environments.install_running("busy")


def _dead_pid() -> int:
    import subprocess

    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


@pytest.mark.parametrize("owner", ["dead", "reused", "garbled"])
def test_an_install_whose_process_is_gone_is_cleaned_up(owner: str):
    import json
    import os

    partial = workload.envs_dir() / "left"
    partial.mkdir(parents=True)
    marker = workload.envs_dir() / environments.INSTALLING / "left"
    marker.parent.mkdir()
    stale = workload.envs_dir() / environments.INSTALLING / "never-started"
    text = {
        "dead": json.dumps({"pid": _dead_pid(), "created": 1.0}),
        "reused": json.dumps({"pid": os.getpid(), "created": 1.0}),  # not this process
        "garbled": "{",
    }[owner]
    marker.write_text(text, encoding="utf-8")
    stale.write_text(text, encoding="utf-8")
    hidden = workload.envs_dir() / ".cache"
    hidden.mkdir()
    assert environments.remove_partial() == [partial]
    assert not partial.exists() and not marker.exists() and not stale.exists()
    assert hidden.exists()  # never an environment's folder


def test_a_finished_install_leaves_no_marker():
    finished("done")
    assert not environments.install_running("done")
    assert not (workload.envs_dir() / environments.INSTALLING / "done").exists()


def test_settle_records_a_success_and_removes_anything_else():
    from rocmpanel.jobs.process import JobOutcome, JobState

    ticket = environments.begin_install("late", ["x"], needed_bytes=1)
    (ticket.path / "bin").mkdir(parents=True)
    (ticket.path / "bin" / "python").symlink_to(sys.executable)
    ok = JobOutcome(JobState.SUCCEEDED, 0, "Done.", result={"installed": {"torch": "2.12.0"}})
    env = environments.settle_install(ticket, ok)
    assert env is not None and workload.find_env("late") is not None

    other = environments.begin_install("cut", ["x"], needed_bytes=1)
    other.path.mkdir()
    assert environments.settle_install(other, None) is None  # the job did not end in time
    assert not other.path.exists()
    cancelled = environments.begin_install("cut", ["x"], needed_bytes=1)
    cancelled.path.mkdir()
    outcome = JobOutcome(JobState.CANCELLED, None, "Cancelled.")
    assert environments.settle_install(cancelled, outcome) is None
    assert not cancelled.path.exists() and workload.find_env("late") is not None
