"""The session store: variables only the panel's jobs get."""

from __future__ import annotations

import json

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.stores.session import SessionStore, job_env_overrides, session_file
from rocmpanel.envvars.transaction import apply_plans, undo_last
from rocmpanel.jobs.spec import JobSpec, prepare


def _apply(store: SessionStore, *changes: EnvChange) -> None:
    apply_plans({store.key: store}, [store.plan(store.read(), changes)])


def test_no_file_means_no_overrides() -> None:
    assert job_env_overrides({}) == {}


def test_values_reach_a_prepared_job_with_references_expanded() -> None:
    store = SessionStore()
    _apply(store, EnvChange("PYTORCH_TUNABLEOP_ENABLED", "1"), EnvChange("PATH", "/x:$PATH"))
    assert session_file().is_file()
    base = {"PATH": "/usr/bin"}
    overrides = job_env_overrides(base)
    assert overrides == {"PYTORCH_TUNABLEOP_ENABLED": "1", "PATH": "/x:/usr/bin"}
    prepared = prepare(JobSpec("probe", "probe", env=overrides), base_env=base)
    assert prepared.env["PYTORCH_TUNABLEOP_ENABLED"] == "1"
    _apply(store, EnvChange("PYTORCH_TUNABLEOP_ENABLED", None))
    assert "PYTORCH_TUNABLEOP_ENABLED" not in job_env_overrides(base)
    undo_last({store.key: store})
    assert job_env_overrides(base)["PYTORCH_TUNABLEOP_ENABLED"] == "1"


def test_session_refuses_invalid_values() -> None:
    with pytest.raises(PanelError, match="Refused"):
        _apply(SessionStore(), EnvChange("HSA_OVERRIDE_GFX_VERSION", "11.0"))
    assert not session_file().exists()


def test_damaged_file_is_a_clear_error() -> None:
    session_file().parent.mkdir(parents=True, exist_ok=True)
    session_file().write_text("{not json")
    with pytest.raises(PanelError, match="damaged"):
        job_env_overrides({})
    assert "not valid JSON" in SessionStore().read().problem


def _file(variables: dict[str, str]) -> None:
    session_file().parent.mkdir(parents=True, exist_ok=True)
    session_file().write_text(json.dumps({"variables": variables}))


def test_windows_store_edits_path_whatever_the_case_of_the_name() -> None:
    store = SessionStore(platform="windows")
    _apply(store, EnvChange("Path", "C:\\a;%Path%"))
    _apply(store, EnvChange("PATH", "C:\\b;%PATH%"))
    assert json.loads(session_file().read_text())["variables"] == {"Path": "C:\\b;%PATH%"}
    _apply(store, EnvChange("path", None))
    assert json.loads(session_file().read_text())["variables"] == {}


def test_linux_store_keeps_names_apart() -> None:
    store = SessionStore(platform="linux")
    _apply(store, EnvChange("Path", "/a"), EnvChange("PATH", "/b:$PATH"))
    assert json.loads(session_file().read_text())["variables"] == {
        "Path": "/a",
        "PATH": "/b:$PATH",
    }


def test_windows_references_and_names_are_case_insensitive() -> None:
    _file({"PATH": "C:\\x;%path%;${Path};$PATH", "Path": "C:\\rocm;%Path%;%NOT_SET%;$NOT_SET"})
    base = {"PATH": "C:\\Windows"}
    assert job_env_overrides(base, "win32") == {"Path": "C:\\rocm;C:\\Windows;%NOT_SET%;"}
    _file({"PATH": "C:\\x;%path%;${Path};$PATH"})
    assert job_env_overrides(base, "win32") == {"PATH": "C:\\x;C:\\Windows;C:\\Windows;C:\\Windows"}


def test_linux_references_are_case_sensitive_and_percent_is_literal() -> None:
    _file({"PATH": "/x:${Path}:$PATH:%PATH%", "Path": "/y"})
    assert job_env_overrides({"PATH": "/usr/bin"}, "linux") == {
        "PATH": "/x::/usr/bin:%PATH%",
        "Path": "/y",
    }
