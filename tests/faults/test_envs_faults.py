"""Fault suite: the workload environments (R6 findings 5, 7, 8, 11, 12).

Concurrent registers keep every interpreter, a damaged ``interpreters.json`` is named and
kept aside before a register replaces it, an environment is its folder (a record naming
another one is damaged, ``--remove NAME`` deletes folder NAME only), removing the active
environment resets the setting first, an active Python that is gone is shown as missing,
empty arguments are argparse errors, and ``torch validate`` / ``torch install`` get the
"Panel jobs" variables as the panel's jobs do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.jobs import workload
from rocmpanel.shell.cli import main


def _env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def _managed(name: str, record_name: str | None = None) -> Path:
    """A finished managed environment in folder ``name`` (its record says ``record_name``)."""
    folder = workload.envs_dir() / name
    _executable(folder / "bin" / "python")
    record = {"name": record_name or name, "created_at": 5.0, "torch_version": "2.9"}
    (folder / workload.RECORD).write_text(json.dumps(record))
    return folder


def _active() -> str:
    return Settings.load().general.workload_python


# -- 5: interpreters.json ------------------------------------------------------------------
REGISTER = (
    "import sys; from rocmpanel.jobs.workload import add_interpreter; add_interpreter(sys.argv[1])"
)


def test_concurrent_registers_keep_every_interpreter(tmp_path: Path) -> None:
    pythons = [str(_executable(tmp_path / f"py{i}")) for i in range(20)]
    procs = [
        subprocess.Popen([sys.executable, "-c", REGISTER, p], env=_env(), stderr=subprocess.PIPE)
        for p in pythons
    ]
    errors = [proc.communicate(timeout=60)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 20, errors
    assert sorted(workload.registered_interpreters()) == sorted(pythons)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[\n "/usr/bin/python3",\n "/opt/py/bin/python3",\n]\n',
            "it is not JSON (Expecting value: line 4 column 1 (char 47))",
        ),
        (
            '{"python": "/usr/bin/python3"}',
            'it holds {"python": "/usr/bin/python3"}, not a list of interpreter paths',
        ),
        ("[1, 2]", "it holds [1, 2], not a list of interpreter paths"),
    ],
)
def test_a_damaged_interpreters_file_is_named_and_kept_aside(
    capsys, tmp_path: Path, text: str, problem: str
) -> None:
    file = paths.config_dir() / "interpreters.json"
    file.parent.mkdir(parents=True)
    file.write_text(text)
    assert main(["torch", "envs"]) == 0
    assert capsys.readouterr().err == (
        f"rocmpanel torch: The list of registered interpreters {file} is damaged ({problem}), "
        "so it is ignored. Fix it by hand, or register an interpreter: the damaged file is "
        "then kept as interpreters.json.bad-<time> and a new list started.\n"
    )
    python = _executable(tmp_path / "python3")
    assert main(["torch", "envs", "--register", str(python)]) == 0
    (kept,) = file.parent.glob("interpreters.json.bad-*")
    assert kept.read_text() == text
    assert capsys.readouterr().out == (
        f"The damaged list of registered interpreters was kept as {kept}; a new list was "
        f"started.\nRegistered {python}\n"
    )
    assert json.loads(file.read_text()) == [str(python)]
    assert main(["torch", "envs"]) == 0
    assert capsys.readouterr().err == ""


def test_an_interpreters_file_that_is_a_folder_is_never_replaced(capsys, tmp_path: Path) -> None:
    file = paths.config_dir() / "interpreters.json"
    file.mkdir(parents=True)
    assert main(["torch", "envs"]) == 0
    assert capsys.readouterr().err == (
        f"rocmpanel torch: The list of registered interpreters {file} is not a regular file, "
        "so it is ignored. Move it away to register interpreters again.\n"
    )
    with pytest.raises(PanelError) as caught:
        workload.add_interpreter(str(_executable(tmp_path / "python3")))
    assert caught.value.message == (
        f"Nothing registered: {file} is not a regular file. Move it away, then try again."
    )
    assert file.is_dir() and not list(file.parent.glob("interpreters.json.bad-*"))


# -- 7: an environment is its folder -------------------------------------------------------
def test_a_record_in_another_folder_is_damaged_and_remove_takes_that_folder_only(capsys) -> None:
    good = _managed("good")
    copy = _managed("good2", record_name="good")
    assert main(["torch", "envs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["good", "(torch", "2.9)", "managed", str(good / "bin/python")]
    assert lines[1] == (
        f'! {"good2":40} {"damaged":10} {copy / workload.RECORD}: the record names "good" '
        'but lives in folder "good2".'
    )
    assert workload.find_env("good") is not None and workload.find_env("good").path == good
    assert main(["torch", "envs", "--remove", "good", "--yes"]) == 0
    assert capsys.readouterr().out == f"Removed {good}\n"
    assert not good.exists() and copy.is_dir()
    assert main(["torch", "envs", "--remove", "good2", "--yes"]) == 0
    assert capsys.readouterr().out == f"Removed {copy}\n"
    assert not copy.exists()


def test_a_huge_name_in_a_record_is_cut_in_the_listing(capsys) -> None:
    _managed("big", record_name="x" * 100_000)
    assert main(["torch", "envs"]) == 0
    out = capsys.readouterr().out
    assert (
        'the record names "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... but lives in folder "big"' in out
    )
    assert len(out) < 1000


# -- 8: the active environment -------------------------------------------------------------
def test_removing_the_active_environment_resets_the_setting_before_deleting(
    capsys, monkeypatch
) -> None:
    from rocmpanel.pytorch import environments

    folder = _managed("e1")
    assert main(["torch", "envs", "--activate", "e1"]) == 0
    assert _active() == str(folder / "bin/python")
    seen: list[str] = []
    real = environments.remove_env

    def remove(name: str):  # what the setting says when the deletion starts
        seen.append(_active())
        raise PanelError("killed during the rmtree")

    monkeypatch.setattr(environments, "remove_env", remove)
    assert main(["torch", "envs", "--remove", "e1", "--yes"]) == 2
    assert seen == [""] and _active() == ""
    monkeypatch.setattr(environments, "remove_env", real)
    capsys.readouterr()
    assert main(["torch", "envs", "--remove", "e1", "--yes"]) == 0
    assert capsys.readouterr().out == f"Removed {folder}\n"


def test_an_active_python_that_is_gone_is_shown_missing_and_clean_resets_it(capsys) -> None:
    folder = _managed("e1")
    assert main(["torch", "envs", "--activate", "e1"]) == 0
    python = folder / "bin/python"
    python.unlink()
    (folder / workload.RECORD).unlink()  # a removal killed after the record went
    capsys.readouterr()
    assert main(["torch", "envs"]) == 0
    assert capsys.readouterr().out == (
        "No managed environments yet: `rocmpanel torch install` creates one.\n"
        f"  (active: {python} (missing: no such file; GPU jobs cannot start until "
        "`rocmpanel torch envs --activate NAME_OR_PYTHON` picks another))\n"
    )
    assert main(["torch", "envs", "--clean"]) == 0
    assert capsys.readouterr().out == (
        f"Removed {folder}\nThe active workload Python {python} was in a removed folder: "
        "the panel's own Python is used now.\n"
    )
    assert _active() == "" and not folder.exists()


def test_a_managed_environment_without_its_python_is_listed_missing(capsys) -> None:
    folder = _managed("e1")
    assert main(["torch", "envs", "--activate", "e1"]) == 0
    (folder / "bin/python").unlink()
    capsys.readouterr()
    assert main(["torch", "envs"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.split() == ["*", "e1", "(torch", "2.9)", "missing", str(folder / "bin/python")]


# -- 11: empty arguments -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["validate", "--python", ""],
            "argument --python: the interpreter is empty (leave the option out for the default)",
        ),
        (
            ["validate", "--env", " "],
            "argument --env: the environment name is empty (leave the option out for the default)",
        ),
        (
            ["envs", "--activate", ""],
            "argument --activate: the environment or interpreter is empty",
        ),
        (["envs", "--register", ""], "argument --register: the interpreter is empty"),
        (["envs", "--remove", "", "--yes"], "argument --remove: the environment name is empty"),
        (
            ["install", "--env", ""],
            "argument --env: the environment name is empty (leave the option out for the default)",
        ),
    ],
)
def test_empty_arguments_are_errors_not_the_default(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["torch", *argv])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"error: {message}\n") and "Traceback" not in err


# -- 12: the "Panel jobs" variables --------------------------------------------------------
def _session(text: str) -> Path:
    path = paths.config_dir() / "session_env.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _echo_python(tmp_path: Path) -> Path:
    """A "workload Python" whose one check reports HSA_OVERRIDE_GFX_VERSION as its figure."""
    script = tmp_path / "echo-python"
    script.write_text(
        f"#!{sys.executable}\nimport json, os\n"
        "check = {'id': 'env', 'name': 'env', 'status': 'pass',\n"
        "         'figure': os.environ.get('HSA_OVERRIDE_GFX_VERSION', 'unset')}\n"
        "print(json.dumps({'event': 'check', 'check': check}), flush=True)\n"
        "print(json.dumps({'event': 'result', 'data': {'checks': [check]}}), flush=True)\n"
    )
    script.chmod(0o755)
    return script


VALIDATE = (sys.executable, "-m", "rocmpanel", "torch", "validate", "--json", "--gfx", "gfx1100")


def test_torch_validate_gets_the_panel_jobs_variables(tmp_path: Path) -> None:
    _session('{"variables": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}')
    result = subprocess.run(
        [*VALIDATE, "--python", str(_echo_python(tmp_path))],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert [c["figure"] for c in json.loads(result.stdout)["checks"]] == ["11.0.0"]


def test_torch_validate_with_damaged_panel_jobs_variables_stops_clearly(tmp_path: Path) -> None:
    path = _session("{not json")
    result = subprocess.run(
        [*VALIDATE, "--python", str(_echo_python(tmp_path))],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"rocmpanel torch: The job variables in {path} are damaged: not valid JSON (Expecting "
        "property name enclosed in double quotes: line 1 column 2 (char 1)). Fix or delete the "
        "file.\n"
    )


INSTALL = ["torch", "install", "--gfx", "gfx1100", "--rocm", "6.4", "--env", "t1"]


class _Stopped:
    """Stands in for JobProcess: keeps the environment the job would get, starts nothing."""

    started: ClassVar[list[dict[str, str | None]]] = []

    def __init__(self, prepared, *_args, **_kwargs) -> None:
        self.started.append(dict(prepared.env))

    def start(self) -> None:
        raise PanelError("stopped by the test")


@pytest.fixture
def no_job(monkeypatch) -> list[dict[str, str | None]]:
    """No disk check, and no install job really started (no network): the envs it got."""
    from rocmpanel.jobs import process, spec
    from rocmpanel.pytorch import environments

    monkeypatch.setattr(environments, "check_free_disk", lambda path, needed: None)
    monkeypatch.setattr(spec, "prepare", lambda s: s)
    monkeypatch.setattr(process, "JobProcess", _Stopped)
    monkeypatch.setattr(_Stopped, "started", [])
    return _Stopped.started


def test_torch_install_gets_the_panel_jobs_variables(capsys, no_job) -> None:
    _session('{"variables": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "PIP_X": "y"}}')
    assert main(INSTALL) == 2
    assert no_job == [{"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "PIP_X": "y"}]
    assert capsys.readouterr().err == "rocmpanel torch: stopped by the test\n"
    assert not (workload.envs_dir() / "t1").exists()


def test_torch_install_with_damaged_panel_jobs_variables_stops_clearly(capsys, no_job) -> None:
    path = _session('{"variables": ["A"]}')
    assert main(INSTALL) == 1
    assert capsys.readouterr().err == (
        f"rocmpanel torch: The job variables in {path} are damaged: expected "
        '{"variables": {"NAME": "value", ...}}. Fix or delete the file.\n'
    )
    assert no_job == []
    envs = workload.envs_dir()
    assert not (envs / "t1").exists()
    assert not (envs / ".installing" / "t1").exists()
