"""``rocmpanel env`` end to end in a temporary home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmpanel.shell.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["env", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_rejected_value_exits_non_zero_with_the_reason(tmp_path: Path, capsys) -> None:
    code, _, err = _run(capsys, "set", "HSA_OVERRIDE_GFX_VERSION", "11.0", "--home", str(tmp_path))
    assert code == 2
    assert "refused" in err and "MAJOR.MINOR.STEP" in err
    assert not (tmp_path / ".profile").exists()
    code, out, _ = _run(
        capsys, "set", "ROCR_VISIBLE_DEVICES", "", "--home", str(tmp_path), "--json"
    )
    assert code == 2 and json.loads(out)["error"] == (
        "refused: an empty value cannot be stored in environment.d (systemd ignores "
        "`ROCR_VISIBLE_DEVICES=`); use `rocmpanel env unset ROCR_VISIBLE_DEVICES`."
    )


def test_set_get_list_unset_undo(tmp_path: Path, capsys) -> None:
    (tmp_path / ".profile").write_text("# mine\n")
    home = ("--home", str(tmp_path))
    assert _run(capsys, "set", "HSA_OVERRIDE_GFX_VERSION", "10.3.0", *home)[0] == 0
    code, out, _ = _run(capsys, "get", "HSA_OVERRIDE_GFX_VERSION", "--json", *home)
    data = json.loads(out)
    assert code == 0 and data["stores"]["environment.d"] == "10.3.0"
    assert data["stores"]["profile"] == "10.3.0" and data["stores"]["session"] is None
    code, out, _ = _run(capsys, "list", "--json", *home)
    row = next(r for r in json.loads(out)["variables"] if r["name"] == "HSA_OVERRIDE_GFX_VERSION")
    assert row["status"] == "valid"
    assert _run(capsys, "unset", "HSA_OVERRIDE_GFX_VERSION", "--store", "profile", *home)[0] == 0
    assert (tmp_path / ".profile").read_text() == "# mine\n"
    assert _run(capsys, "undo", *home)[0] == 0
    assert "10.3.0" in (tmp_path / ".profile").read_text()
    assert _run(capsys, "undo", *home)[0] == 0
    assert (tmp_path / ".profile").read_text() == "# mine\n"
    code, _, err = _run(capsys, "undo", *home)
    assert code == 1 and "no apply to undo" in err


def test_path_entries_and_dry_run(tmp_path: Path, capsys) -> None:
    home = ("--home", str(tmp_path), "--store", "environment.d")
    code, out, _ = _run(capsys, "set", "PATH", "/opt/rocm/bin", "--prepend", "--dry-run", *home)
    assert code == 0 and "+PATH=/opt/rocm/bin:$PATH" in out
    envd = tmp_path / ".config" / "environment.d" / "60-rocmpanel.conf"
    assert not envd.exists()
    assert _run(capsys, "set", "PATH", "/opt/rocm/bin", "--prepend", *home)[0] == 0
    assert _run(capsys, "set", "PATH", "/opt/x/bin", "--append", *home)[0] == 0
    assert "PATH=/opt/rocm/bin:$PATH:/opt/x/bin\n" in envd.read_text()
    assert _run(capsys, "set", "PATH", "/opt/rocm/bin", "--remove-entry", *home)[0] == 0
    assert "PATH=$PATH:/opt/x/bin\n" in envd.read_text()
    code, _, err = _run(capsys, "set", "ROCM_PATH", "/x", "--append", *home)
    assert code == 2 and "not a list variable" in err


def test_conflict_exits_1_with_message(tmp_path: Path, capsys) -> None:
    (tmp_path / ".profile").write_bytes(b"# >>> rocmpanel environment >>>\n")
    code, _, err = _run(capsys, "set", "A_VAR", "1", "--home", str(tmp_path))
    assert code == 1 and "markers are broken" in err


@pytest.mark.parametrize("argv", [("get",), ("set", "A_VAR")])
def test_usage_errors(tmp_path: Path, capsys, argv) -> None:
    assert _run(capsys, *argv, "--home", str(tmp_path))[0] == 2


def test_unset_values_show_as_not_set(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "0")
    monkeypatch.delenv("ROCR_VISIBLE_DEVICES", raising=False)
    home = ("--home", str(tmp_path))
    assert _run(capsys, "set", "ROCR_VISIBLE_DEVICES", "1", "--store", "profile", *home)[0] == 0
    code, out, _ = _run(capsys, "list", *home)
    assert code == 0 and "None" not in out
    assert "ROCR_VISIBLE_DEVICES [valid]  process=(not set)  profile=1" in out.splitlines()
    assert "HIP_VISIBLE_DEVICES [valid]  process=0  " in out
    code, out, _ = _run(capsys, "get", "ROCR_VISIBLE_DEVICES", *home)
    assert out.splitlines()[1:5] == [
        "  this process: (not set)",
        "  environment.d: (not set)",
        "  profile: 1",
        "  session: (not set)",
    ]


def test_warnings_and_json_output_of_a_change(tmp_path: Path, capsys) -> None:
    home = ("--home", str(tmp_path), "--store", "environment.d")
    code, out, err = _run(capsys, "set", "PATH", "/opt/rocm/bin", *home, "--json", "--force")
    data = json.loads(out)
    assert code == 0 and data["ok"] and data["notes"] == []
    assert data["warnings"] == [
        "warning (environment.d): written with --force: The new PATH does not keep $PATH: "
        "without $PATH the system folders (/usr/bin, /bin) are lost: login shells, scripts "
        "and the desktop session find no programs (not even ls or bash)."
    ]
    assert "+PATH=/opt/rocm/bin" in data["diff"] and err == ""


MACHINE_ENV = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"


def test_windows_change_warns_about_path_length_and_says_who_sees_it(
    capsys, monkeypatch, fake_registry
) -> None:
    from rocmpanel.envvars import store as env_store
    from rocmpanel.envvars.stores import windows

    fake = fake_registry
    fake.set(MACHINE_ENV, "Path", "M" * 29_990, fake.REG_EXPAND_SZ)
    fake.set("HKCU\\Environment", "Path", "C:\\a", fake.REG_SZ)
    broadcasts: list[int] = []
    real = env_store.make_stores
    monkeypatch.setattr(
        env_store,
        "make_stores",
        lambda **kw: real("windows", registry=fake, broadcast=lambda: broadcasts.append(1)),
    )
    warning = (
        "warning (Windows user): Path: programs get the machine Path (29,990 characters) and "
        "your user Path (16) joined, 30,007 characters, 2,760 characters below Windows' limit "
        "of 32,767; past it programs may not find what is on it. Remove folders you no longer "
        "need from your user Path."
    )
    argv = ("set", "PATH", "C:\\rocm\\bin", "--append", "--store", "registry")
    code, out, err = _run(capsys, *argv, "--dry-run", "--json")
    assert code == 0 and json.loads(out)["warnings"] == [warning] and broadcasts == []
    code, out, err = _run(capsys, *argv)
    assert code == 0 and out == "Wrote HKCU\\Environment.\n"
    assert err == f"{warning}\nnote: {windows.APPLY_NOTE}\n"
    assert fake.values_of("HKCU\\Environment") == {"Path": ("C:\\a;C:\\rocm\\bin", fake.REG_SZ)}
    code, out, err = _run(capsys, "undo", "--json")
    data = json.loads(out)
    assert code == 0 and data["restored"] == ["HKCU\\Environment"]
    assert data["notes"] == [windows.APPLY_NOTE] and broadcasts == [1, 1]
    assert fake.values_of("HKCU\\Environment") == {"Path": ("C:\\a", fake.REG_SZ)}


def _no_rocm_variables(monkeypatch) -> None:
    """This process's environment without any variable of the catalogue."""
    import os

    from rocmpanel.envvars.catalogue import load_catalogue

    known = load_catalogue().known_names()
    for name in [n for n in os.environ if n in known and n != "PATH"]:
        monkeypatch.delenv(name)


def test_list_with_nothing_set_says_so(tmp_path: Path, capsys, monkeypatch) -> None:
    _no_rocm_variables(monkeypatch)
    code, out, err = _run(capsys, "list", "--home", str(tmp_path))
    assert (code, err) == (0, "")
    assert out == (
        "No ROCm variables are set in environment.d, ~/.profile or in this process's "
        "environment. `rocmpanel env set NAME VALUE` sets one.\n"
    )
    code, out, _ = _run(capsys, "list", "--json", "--home", str(tmp_path))
    assert code == 0 and json.loads(out)["variables"] == []


def test_a_name_outside_the_catalogue_is_set_with_a_notice(tmp_path: Path, capsys) -> None:
    code, out, err = _run(
        capsys, "set", "MY_TOOL_HOME", "/opt/x", "--store", "environment.d", "--home", str(tmp_path)
    )
    envd = tmp_path / ".config" / "environment.d" / "60-rocmpanel.conf"
    assert code == 0 and out.startswith("Wrote ")
    assert err == (
        "note: MY_TOOL_HOME is not in rocmpanel's catalogue of ROCm variables: set as given, "
        "no checks.\n"
    )
    assert "MY_TOOL_HOME=/opt/x" in envd.read_text()
    # A catalogue variable gets no such notice.
    code, _, err = _run(
        capsys,
        "set",
        "HIP_VISIBLE_DEVICES",
        "0",
        "--store",
        "environment.d",
        "--home",
        str(tmp_path),
    )
    assert code == 0 and "catalogue" not in err


def test_an_invalid_name_stays_an_error(tmp_path: Path, capsys) -> None:
    code, out, err = _run(capsys, "set", "1BAD-NAME", "x", "--home", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        "rocmpanel env: refused: '1BAD-NAME' is not a usable variable name: use letters, "
        "digits and _ and do not start with a digit.\n"
    )
    assert not (tmp_path / ".config").exists() and not (tmp_path / ".profile").exists()
