"""What follows a change of HKCU\\Environment, on Linux through the seams: the broadcast in
a background thread with SendMessageTimeoutW's declared types (a fake user32), the values
the panel's jobs get (FakeRegistry), and the warnings shown with a plan."""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
from ctypes import wintypes
from typing import Any

import pytest

from rocmpanel.envvars.plan import EnvChange
from rocmpanel.envvars.stores import windows
from rocmpanel.envvars.stores.windows import (
    APPLY_NOTE,
    WindowsUserStore,
    broadcast_environment_change,
    expand_percent,
    fresh_values,
    path_length_warning,
)
from rocmpanel.envvars.transaction import apply_plans, undo_last
from rocmpanel.jobs import workload
from rocmpanel.jobs.job_env import job_env_for
from rocmpanel.jobs.spec import JobSpec

ENV = "HKCU\\Environment"
MACHINE = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
USER_PATH = "%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools"
MACHINE_PATH = "%SystemRoot%\\system32;%SystemRoot%;C:\\Program Files\\AMD\\ROCm\\6.4\\bin"
LOGON = {"SystemRoot": "C:\\Windows", "USERPROFILE": "C:\\Users\\ann", "LOCALAPPDATA": "L:"}


@pytest.fixture(autouse=True)
def _no_changes_from_other_tests():
    windows.forget_changes()
    yield
    windows.forget_changes()


class FakeSend:
    """user32.SendMessageTimeoutW: keeps the argtypes and restype set on it, and each call
    (arguments, the string its LPARAM points to, the thread it ran on). ``gate``: the call
    waits for it (a broadcast that takes its time)."""

    def __init__(self, gate: threading.Event | None = None, error: Exception | None = None):
        self.argtypes: Any = None
        self.restype: Any = None
        self.calls: list[tuple[Any, ...]] = []
        self.text: list[str] = []
        self.threads: list[threading.Thread] = []
        self.gate, self.error = gate, error
        self.entered = threading.Event()

    def __call__(self, *args: Any) -> int:
        self.calls.append(args)
        self.text.append(ctypes.wstring_at(args[3]))
        self.threads.append(threading.current_thread())
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(10)
        if self.error is not None:
            raise self.error
        return 1


class FakeUser32:
    def __init__(self, send: FakeSend) -> None:
        self.SendMessageTimeoutW = send


def _machine(fake: Any, path: str = MACHINE_PATH) -> None:
    fake.set(MACHINE, "Path", path, fake.REG_EXPAND_SZ)
    fake.set(MACHINE, "TEMP", "%SystemRoot%\\TEMP", fake.REG_EXPAND_SZ)


def _user(fake: Any, **values: tuple[str, int]) -> WindowsUserStore:
    fake.add_key(ENV)
    for name, (data, kind) in values.items():
        fake.set(ENV, name, data, kind)
    return WindowsUserStore(fake, broadcast=lambda: None)


def _apply(store: WindowsUserStore, *changes: EnvChange) -> None:
    apply_plans({store.key: store}, [store.plan(store.read(), changes)])


# ---- the broadcast --------------------------------------------------------------------------


def test_broadcast_runs_in_its_own_thread_with_the_declared_types() -> None:
    send = FakeSend()
    thread = broadcast_environment_change(FakeUser32(send), platform="win32", timeout_ms=1500)
    assert thread is not None
    thread.join(10)
    assert send.argtypes == [
        wintypes.HWND,
        wintypes.UINT,
        wintypes.WPARAM,
        wintypes.LPARAM,
        wintypes.UINT,
        wintypes.UINT,
        ctypes.POINTER(ctypes.c_size_t),
    ]
    assert ctypes.sizeof(send.argtypes[6]._type_) == ctypes.sizeof(ctypes.c_void_p)
    assert send.restype is wintypes.LPARAM
    (call,) = send.calls
    assert call[:3] == (0xFFFF, 0x001A, 0) and call[4:6] == (0x0002, 1500)
    assert send.text == ["Environment"]
    assert type(call[6]._obj) is ctypes.c_size_t  # byref(DWORD_PTR), not a 4-byte DWORD
    assert send.threads == [thread] and thread is not threading.current_thread()
    assert thread.name == "rocmpanel-env-broadcast" and not thread.daemon


def test_no_broadcast_off_windows() -> None:
    send = FakeSend()
    assert broadcast_environment_change(FakeUser32(send), platform="linux") is None
    assert send.calls == [] and send.argtypes is None


def test_a_failed_broadcast_is_logged_not_raised(caplog) -> None:
    send = FakeSend(error=OSError(1400, "Invalid window handle"))
    with caplog.at_level(logging.WARNING, logger=windows.__name__):
        thread = broadcast_environment_change(FakeUser32(send), platform="win32")
        assert thread is not None
        thread.join(10)
    assert [r.getMessage() for r in caplog.records] == [
        "Could not announce the environment change to other programs: "
        "[Errno 1400] Invalid window handle"
    ]


def test_apply_and_undo_return_while_the_broadcast_is_still_running(fake_registry) -> None:
    gate = threading.Event()
    send = FakeSend(gate)
    started: list[threading.Thread | None] = []

    def broadcast() -> threading.Thread | None:
        thread = broadcast_environment_change(FakeUser32(send), platform="win32")
        started.append(thread)
        return thread

    fake_registry.add_key(ENV)
    store = WindowsUserStore(fake_registry, broadcast=broadcast)
    try:
        _apply(store, EnvChange("HIP_VISIBLE_DEVICES", "1"))
        assert send.entered.wait(10)  # the call is under way, waiting for the gate ...
        assert not gate.is_set()  # ... and the apply has returned meanwhile
    finally:
        gate.set()
    undo_last({store.key: store})
    for thread in started:
        assert thread is not None
        thread.join(10)
    assert send.text == ["Environment", "Environment"]
    assert threading.current_thread() not in send.threads
    assert fake_registry.values_of(ENV) == {}


# ---- the values the panel's jobs get ---------------------------------------------------------


def test_jobs_get_what_a_new_program_would_after_an_apply(fake_registry, monkeypatch) -> None:
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    fake = fake_registry
    _machine(fake)
    store = _user(
        fake,
        Path=(USER_PATH, fake.REG_EXPAND_SZ),
        TEMP=("%USERPROFILE%\\tmp", fake.REG_EXPAND_SZ),
        AMD_LOG_LEVEL=("4", fake.REG_SZ),
        UNTOUCHED=("x", fake.REG_SZ),
    )
    _apply(
        store,
        EnvChange("PATH", USER_PATH + ";C:\\rocm\\bin"),
        EnvChange("MIOPEN_USER_DB_PATH", "%LOCALAPPDATA%\\miopen"),
        EnvChange("HIP_VISIBLE_DEVICES", "1"),
        EnvChange("TEMP", None),
        EnvChange("AMD_LOG_LEVEL", None),
    )
    assert windows.changed_names() == [
        "AMD_LOG_LEVEL",
        "HIP_VISIBLE_DEVICES",
        "MIOPEN_USER_DB_PATH",
        "Path",
        "TEMP",
    ]
    expand = functools.partial(expand_percent, environ=LOGON)
    env = job_env_for(
        JobSpec("x", "probe", env={"HIP_VISIBLE_DEVICES": "0"}),
        platform="win32",
        registry=fake,
        expand=expand,
    )
    assert env == {
        "AMD_LOG_LEVEL": None,  # gone from the user values and never a machine one
        "HIP_VISIBLE_DEVICES": "0",  # the job's own value still wins
        "MIOPEN_USER_DB_PATH": "L:\\miopen",
        "Path": "C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\AMD\\ROCm\\6.4\\bin;"
        "C:\\Users\\ann\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools;C:\\rocm\\bin",
        "TEMP": "C:\\Windows\\TEMP",  # the user value deleted: the machine one
    }
    assert job_env_for(JobSpec("x", "probe"), platform="linux", registry=fake) == {}


def test_undo_is_followed_too_and_nothing_changed_means_nothing_added(
    fake_registry, monkeypatch
) -> None:
    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    fake = fake_registry
    _machine(fake)
    store = _user(fake, Path=(USER_PATH, fake.REG_EXPAND_SZ))
    spec = JobSpec("x", "probe")
    expand = functools.partial(expand_percent, environ=LOGON)
    assert job_env_for(spec, platform="win32", registry=fake, expand=expand) == {}
    _apply(store, EnvChange("Path", None))
    machine_only = "C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\AMD\\ROCm\\6.4\\bin"
    assert job_env_for(spec, platform="win32", registry=fake, expand=expand) == {
        "Path": machine_only
    }
    undo_last({store.key: store})
    user = "C:\\Users\\ann\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools"
    assert job_env_for(spec, platform="win32", registry=fake, expand=expand) == {
        "Path": machine_only + ";" + user
    }


def test_default_expansion_sees_user_plain_values_and_the_process_env(
    fake_registry, monkeypatch
) -> None:
    fake = fake_registry
    monkeypatch.setenv("USERPROFILE", "C:\\Users\\bob")
    fake.set(ENV, "ROCM_HOME", "D:\\rocm", fake.REG_SZ)
    fake.set(ENV, "Path", "%ROCM_HOME%\\bin;%userprofile%\\bin;%NOPE%", fake.REG_EXPAND_SZ)
    assert fresh_values(["PATH", "ROCM_HOME"], fake) == {
        "Path": "D:\\rocm\\bin;C:\\Users\\bob\\bin;%NOPE%",  # no machine Path here
        "ROCM_HOME": "D:\\rocm",
    }


def test_session_path_is_one_variable_with_the_new_registry_path(
    fake_registry, monkeypatch
) -> None:
    from rocmpanel.envvars.stores.session import SessionStore

    monkeypatch.setattr(workload, "env_for_python", lambda python: None)
    monkeypatch.setenv("PATH", "C:\\old")
    fake = fake_registry
    _machine(fake)
    store = _user(fake, Path=("C:\\tools", fake.REG_SZ))
    _apply(store, EnvChange("Path", "C:\\tools;C:\\rocm\\bin"))
    session = SessionStore(platform="windows")
    apply_plans(
        {session.key: session},
        [session.plan(session.read(), [EnvChange("PATH", "C:\\first;%path%")])],
    )
    expand = functools.partial(expand_percent, environ=LOGON)
    env = job_env_for(JobSpec("x", "probe"), platform="win32", registry=fake, expand=expand)
    machine = "C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\AMD\\ROCm\\6.4\\bin"
    assert env == {"PATH": f"C:\\first;{machine};C:\\tools;C:\\rocm\\bin"}


# ---- warnings with a plan --------------------------------------------------------------------


def test_references_that_will_not_expand_at_logon_warn(fake_registry) -> None:
    fake = fake_registry
    store = _user(
        fake,
        ROCM_HOME=("%USERPROFILE%\\rocm", fake.REG_EXPAND_SZ),
        PLAIN=("D:\\plain", fake.REG_SZ),
    )
    plan = store.plan(
        store.read(),
        [
            EnvChange("MIOPEN_USER_DB_PATH", "%rocm_home%\\db;%PLAIN%"),
            EnvChange("MIOPEN_CUSTOM_CACHE_DIR", "C:\\Users\\%USERNAME%\\cache"),
        ],
    )
    assert plan.warnings == (
        "MIOPEN_USER_DB_PATH: %rocm_home% refers to your user variable ROCM_HOME, which "
        "itself holds %...% references; Windows may expand it to its old value or not at "
        "all. Write ROCM_HOME's value out in MIOPEN_USER_DB_PATH instead.",
        "MIOPEN_CUSTOM_CACHE_DIR: %USERNAME% may stay unexpanded in programs Windows "
        "starts: Windows sets USERNAME after your user variables. Write the value out "
        "instead.",
    )


def test_references_that_do_expand_do_not_warn(fake_registry) -> None:
    fake = fake_registry
    _machine(fake)
    store = _user(fake, Path=(USER_PATH, fake.REG_EXPAND_SZ), PLAIN=("D:\\p", fake.REG_SZ))
    plan = store.plan(
        store.read(),
        [
            EnvChange("Path", USER_PATH + ";%PLAIN%\\bin;%SystemRoot%\\x;%LOCALAPPDATA%\\y"),
            EnvChange("ROCM_PATH", "%ProgramFiles%\\AMD\\ROCm\\6.4"),
        ],
    )
    assert plan.warnings == ()


def test_path_near_the_length_limit_warns(fake_registry) -> None:
    fake = fake_registry
    machine = "M" * 20_000
    fake.set(MACHINE, "Path", machine, fake.REG_EXPAND_SZ)
    store = _user(fake, Path=("C:\\a", fake.REG_SZ))
    at_threshold = "U" * (30_000 - 20_001)  # machine + ";" + user == 30,000: no warning
    assert store.plan(store.read(), [EnvChange("Path", at_threshold)]).warnings == ()
    plan = store.plan(store.read(), [EnvChange("Path", at_threshold + "U")])
    assert plan.warnings == (
        "Path: programs get the machine Path (20,000 characters) and your user Path (10,000) "
        "joined, 30,001 characters, 2,766 characters below Windows' limit of 32,767; past "
        "it programs may not find what is on it. Remove folders you no longer need from "
        "your user Path.",
    )
    unrelated = store.plan(store.read(), [EnvChange("HIP_VISIBLE_DEVICES", "0")])
    assert unrelated.warnings == ()  # only a plan that changes Path is measured


def test_path_over_the_limit_says_so() -> None:
    assert path_length_warning("u" * 12_767, "m" * 20_000) == (
        "Path: programs get the machine Path (20,000 characters) and your user Path (12,767) "
        "joined, 32,768 characters, over Windows' limit of 32,767 characters for one "
        "variable; past it programs may not find what is on it. Remove folders you no "
        "longer need from your user Path."
    )
    assert path_length_warning("u" * 30_000, None) is None
    assert path_length_warning(None, None) is None


def test_help_and_apply_note_say_who_sees_a_change() -> None:
    assert "only programs that Explorer starts from then on see the new values" in (
        WindowsUserStore.help
    )
    assert "rocmpanel itself" in WindowsUserStore.help
    assert APPLY_NOTE == (
        "Only programs that Explorer starts from now on see the new values (a terminal "
        "opened from the Start menu, say); terminals and programs already open, and "
        "rocmpanel itself, keep the old ones until restarted. rocmpanel's own jobs get the "
        "new values."
    )


def test_editor_previews_the_warnings_and_says_who_sees_the_change(qtbot, fake_registry) -> None:
    from rocmpanel.envvars.store import make_stores
    from rocmpanel.envvars.views.editor import EnvEditor

    fake = fake_registry
    fake.set(MACHINE, "Path", "M" * 29_990, fake.REG_EXPAND_SZ)
    store = _user(fake, Path=("C:\\a", fake.REG_SZ))
    stores = make_stores("windows", registry=fake, broadcast=lambda: None)
    editor = EnvEditor(stores=stores, environ={})
    qtbot.addWidget(editor)
    with qtbot.waitSignal(editor.loaded, timeout=5000):
        pass
    editor.target_boxes["session"].setChecked(False)
    editor.propose("Path", "C:\\a;C:\\rocm\\bin")
    preview = editor.preview_text()
    assert preview.startswith(
        "Warning: Path: programs get the machine Path (29,990 characters) and your user "
        "Path (16) joined, 30,007 characters, 2,760 characters below Windows' limit of "
        "32,767; past it programs may not find what is on it. Remove folders you no longer "
        "need from your user Path.\n\n--- HKCU\\Environment (now)\n"
    )
    with qtbot.waitSignal(editor.write_finished, timeout=5000) as blocker:
        assert editor.apply()
    assert blocker.args == [True]
    assert editor.status.text() == f"Wrote HKCU\\Environment. {APPLY_NOTE}"
    assert store.read().values == {"Path": "C:\\a;C:\\rocm\\bin"}
