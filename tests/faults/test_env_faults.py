"""Issue 12, the environment stores: nothing lost, nothing half-applied, nothing that breaks a
login shell (findings 1, 3, 5, 6, 7, 8, 9, the env rows of 10 and the journal rows of 11).

Every test runs with HOME and ROCMPANEL_HOME in temp folders (tests/conftest.py); the
subprocesses inherit them. Concurrency and kill -9 use real processes; the other cases call
the CLI's ``main`` in this process, which is what ``rocmpanel env`` runs.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rocmpanel.base import paths
from rocmpanel.envvars import formats, journal
from rocmpanel.envvars.store import make_stores, sha256
from rocmpanel.envvars.transaction import recover_and_read
from rocmpanel.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = Path("/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator")
USER_PROFILE = b"# my own\nexport EDITOR=vi\n"
T = TypeVar("T")


def home() -> Path:
    return Path(os.environ["HOME"])


def profile() -> Path:
    return home() / ".profile"


def envd() -> Path:
    return home() / ".config" / "environment.d" / "60-rocmpanel.conf"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["env", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code != 70  # never the last-resort catch of shell/cli.py
    return code, out, err


def spawn_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result; fails (instead of hanging the suite) after ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def leftovers() -> list[str]:
    """Temp files of any writer anywhere under HOME or ROCMPANEL_HOME."""
    found = []
    for root in (home(), Path(os.environ["ROCMPANEL_HOME"])):
        found += [str(p) for p in root.rglob("*") if p.name.endswith(".tmp")]
    return sorted(found)


def values() -> tuple[dict[str, str], dict[str, str]]:
    """The variables of ~/.profile's block and of environment.d, each file checked for tearing
    (it parses, ~/.profile passes sh -n, the user's own lines are intact)."""
    stores = make_stores("linux", home=home())
    read = {key: stores[key].read() for key in ("profile", "environment.d")}
    for snapshot in read.values():
        assert not snapshot.problem, snapshot.problem
    if profile().exists():
        data = profile().read_bytes()
        assert data.startswith(USER_PROFILE)
        done = subprocess.run(["sh", "-n", str(profile())], capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
    if envd().exists():
        assert envd().read_bytes().endswith(b"\n")
    return dict(read["profile"].values), dict(read["environment.d"].values)


def assert_consistent() -> dict[str, str]:
    """Both stores in step, the journal complete and matching the files, no temp file."""
    in_profile, in_envd = values()
    assert in_profile == in_envd
    entries = journal.load()
    assert all(entry["state"] == "complete" for entry in entries)
    for key, path in (("profile", profile()), ("environment.d", envd())):
        newest = next(
            (r for e in reversed(entries) for r in reversed(e["records"]) if r["store"] == key),
            None,
        )
        if newest is not None:
            current = path.read_bytes() if path.exists() else None
            assert sha256(current) == newest["written_sha256"], f"{key} is behind the journal"
    assert leftovers() == []
    return in_profile


@pytest.fixture(autouse=True)
def user_profile() -> Path:
    profile().write_bytes(USER_PROFILE)
    return profile()


# ---- finding 1: concurrent changes ----------------------------------------------------------


def test_forty_concurrent_sets_all_land_and_undo_works_after() -> None:
    """40 processes, each ready to run ``rocmpanel env set VAR_i value_i``, released at once
    (so the writes fall together and no process's start-up spreads them out)."""
    count = 40
    procs = [start_cli(-1, "set", f"VAR_{i:02d}", f"value_{i:02d}") for i in range(count)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outcomes = [(proc.communicate(timeout=120), proc.returncode) for proc in procs]
    failed = [(rc, err) for (_, err), rc in outcomes if rc != 0]
    assert failed == []
    assert all("Traceback" not in err for (_, err), _ in outcomes)
    wanted = {f"VAR_{i:02d}": f"value_{i:02d}" for i in range(count)}
    in_profile = assert_consistent()
    assert in_profile == wanted
    entries = journal.load()
    assert len(entries) == count
    assert sorted(entry["summary"] for entry in entries) == sorted(
        f"{k}={v}" for k, v in wanted.items()
    )
    last = entries[-1]["summary"].split("=")[0]
    undo = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "env", "undo"],
        env=spawn_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert undo.returncode == 0, undo.stderr
    del wanted[last]
    assert assert_consistent() == wanted
    assert len(journal.load()) == count - 1


# ---- finding 7: kill -9 at every step, then recovery ----------------------------------------

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from rocmpanel.shell.cli import main
    import rocmpanel.envvars.transaction
    from rocmpanel.envvars.catalogue import load_catalogue
    load_catalogue()
    k = int(sys.argv[1])
    count = [0]
    real = os.replace
    def replace(src, dst):
        count[0] += 1
        if count[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst)
    os.replace = replace
    if k <= 0:  # wait for the go (then the test may kill -9 from outside)
        print("ready", flush=True)
        sys.stdin.readline()
    sys.exit(main(sys.argv[2:]))
    """
)


def start_cli(kill_at: int, *argv: str) -> subprocess.Popen[str]:
    """``rocmpanel env ARGV`` in a new process, killed with SIGKILL just before its
    ``kill_at``-th ``os.replace``; with ``kill_at`` 0 or less it prints "ready" once set up
    and waits for a line on stdin before it starts."""
    return subprocess.Popen(
        [sys.executable, "-c", KILLER, str(kill_at), "env", *argv],
        env=spawn_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def killed_run(kill_at: int, *argv: str, delay: float | None = None) -> int:
    """Run ``rocmpanel env ARGV``, killed with SIGKILL just before its ``kill_at``-th
    ``os.replace`` (0: from outside, ``delay`` seconds after it starts working)."""
    proc = start_cli(kill_at, *argv)
    if kill_at == 0:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == "ready\n"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(delay or 0.0)
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    return proc.returncode


def recover_in_a_new_process() -> str:
    """``env list`` as the next command: it runs recovery first."""
    done = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "env", "list"],
        env=spawn_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def prepare_two_applies(capsys) -> None:
    assert cli(capsys, "set", "A_VAR", "1")[0] == 0
    assert cli(capsys, "set", "B_VAR", "2")[0] == 0


# An apply over both stores replaces: backup environment.d, backup ~/.profile, the journal
# (pending), environment.d, ~/.profile, the journal (complete). An undo: the two copies of
# what it replaces, the journal (undoing), environment.d, ~/.profile, the journal.
STEPS = range(1, 7)


@pytest.mark.parametrize("step", STEPS)
def test_set_killed_at_each_step_is_recovered(capsys, step: int) -> None:
    prepare_two_applies(capsys)
    assert killed_run(step, "set", "C_VAR", "3") == -signal.SIGKILL
    notes = recover_in_a_new_process()
    state = assert_consistent()
    assert state["A_VAR"] == "1" and state["B_VAR"] == "2"
    summaries = [entry["summary"] for entry in journal.load()]
    if "C_VAR" in state:  # rolled forward: the change is complete and can be undone
        assert step == 6 and summaries == ["A_VAR=1", "B_VAR=2", "C_VAR=3"]
        assert "had been written completely" in notes
        assert cli(capsys, "undo")[0] == 0
    else:  # rolled back, or never started
        assert summaries == ["A_VAR=1", "B_VAR=2"]
        assert (step == 5) == ("was rolled back" in notes)
    assert cli(capsys, "undo")[0] == 0
    assert assert_consistent() == {"A_VAR": "1"}


@pytest.mark.parametrize("step", STEPS)
def test_undo_killed_at_each_step_is_recovered(capsys, step: int) -> None:
    prepare_two_applies(capsys)
    assert killed_run(step, "undo") == -signal.SIGKILL
    notes = recover_in_a_new_process()
    state = assert_consistent()
    summaries = [entry["summary"] for entry in journal.load()]
    if step <= 3:  # killed before the entry said "undoing": nothing was restored
        assert state == {"A_VAR": "1", "B_VAR": "2"} and summaries == ["A_VAR=1", "B_VAR=2"]
    else:  # the undo was finished by recovery (or had finished)
        assert state == {"A_VAR": "1"} and summaries == ["A_VAR=1"]
        assert step == 6 or "was finished" in notes
    assert cli(capsys, "undo")[0] == 0
    assert assert_consistent() == ({"A_VAR": "1"} if step <= 3 else {})


def test_kill_9_from_outside_at_random_moments(capsys) -> None:
    rng = random.Random(12)
    assert cli(capsys, "set", "A_VAR", "1")[0] == 0
    for trial in range(4):
        killed_run(0, "set", f"K_{trial}", str(trial), delay=rng.uniform(0.0, 0.05))
        recover_in_a_new_process()
        state = assert_consistent()
        assert state["A_VAR"] == "1"
        summaries = [entry["summary"] for entry in journal.load()]
        assert (f"K_{trial}" in state) == (f"K_{trial}={trial}" in summaries)


# ---- finding 6: backups not writable --------------------------------------------------------


def test_backups_folder_not_writable_changes_nothing(capsys) -> None:
    paths.data_dir().mkdir(parents=True, exist_ok=True)
    paths.backups_dir().write_bytes(b"")  # a file in its place: fails even for root
    code, _, err = cli(capsys, "set", "A_VAR", "1")
    assert code == 1
    assert f"The backups folder {paths.backups_dir()} is not writable" in err
    assert "nothing was changed" in err
    assert profile().read_bytes() == USER_PROFILE and not envd().exists()
    assert journal.load() == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_backups_folder_changes_nothing(capsys) -> None:
    paths.backups_dir().mkdir(parents=True)
    paths.backups_dir().chmod(0o500)
    try:
        code, _, err = cli(capsys, "set", "A_VAR", "1")
    finally:
        paths.backups_dir().chmod(0o700)
    assert code == 1 and "is not writable" in err
    assert profile().read_bytes() == USER_PROFILE and not envd().exists()


# ---- finding 5: symlinks --------------------------------------------------------------------


def test_symlinked_files_are_written_through_and_undo_restores_them(capsys) -> None:
    dotfiles = home() / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "profile").write_bytes(USER_PROFILE)
    (dotfiles / "rocm.conf").write_bytes(b"# mine\n")
    profile().unlink()
    profile().symlink_to(dotfiles / "profile")
    envd().parent.mkdir(parents=True)
    envd().symlink_to(Path("../../dotfiles/rocm.conf"))
    assert cli(capsys, "set", "HSA_ENABLE_SDMA", "0")[0] == 0
    assert profile().is_symlink() and envd().is_symlink()
    assert os.readlink(envd()) == "../../dotfiles/rocm.conf"
    assert b"export HSA_ENABLE_SDMA='0'\n" in (dotfiles / "profile").read_bytes()
    assert (dotfiles / "rocm.conf").read_bytes() == b"# mine\nHSA_ENABLE_SDMA=0\n"
    assert sorted(p.name for p in dotfiles.iterdir()) == ["profile", "rocm.conf"]
    assert cli(capsys, "undo")[0] == 0
    assert profile().is_symlink() and envd().is_symlink()
    assert (dotfiles / "profile").read_bytes() == USER_PROFILE
    assert (dotfiles / "rocm.conf").read_bytes() == b"# mine\n"


def test_a_dangling_link_gets_its_target_and_undo_removes_only_the_target(capsys) -> None:
    target = home() / "dotfiles" / "profile"
    target.parent.mkdir()
    profile().unlink()
    profile().symlink_to(target)
    assert cli(capsys, "set", "A_VAR", "1", "--store", "profile")[0] == 0
    assert profile().is_symlink() and b"export A_VAR='1'" in target.read_bytes()
    assert cli(capsys, "undo")[0] == 0
    assert profile().is_symlink() and not target.exists()


# ---- findings 3 and 9: values and the shell -------------------------------------------------

REFUSED_IN_LISTS = ["${FOO", "${NOPE?boom}", "${HOME/o/0}", "${HOME:1}", "$$", "$1"]
LITERALS = [
    "a$b",
    "pid$$",
    "${FOO",
    "${NOPE?boom}",
    "${HOME/o/0}",
    "${HOME:1}",
    "$1",
    'it\'s "q" \\ x',
]


@pytest.mark.parametrize("bad", REFUSED_IN_LISTS)
def test_path_like_values_refuse_every_other_dollar_form(capsys, bad: str) -> None:
    code, _, err = cli(capsys, "set", "PATH", f"/opt/x:{bad}:$PATH")
    assert code == 2
    assert "is not a plain variable reference" in err and "$NAME or ${NAME}" in err
    code, _, err = cli(capsys, "set", "LD_LIBRARY_PATH", bad, "--prepend")
    assert code == 2 and "is not a plain variable reference" in err
    assert profile().read_bytes() == USER_PROFILE and not envd().exists()


def test_path_like_values_keep_their_references(capsys) -> None:
    assert cli(capsys, "set", "PATH", "/opt/rocm/bin:${HOME}/bin:$PATH")[0] == 0
    assert cli(capsys, "set", "ROCM_PATH", "$HOME/rocm")[0] == 0
    text = profile().read_text()
    assert 'export PATH="/opt/rocm/bin:${HOME}/bin:$PATH"\n' in text
    assert 'export ROCM_PATH="$HOME/rocm"\n' in text
    assert "PATH=/opt/rocm/bin:${HOME}/bin:$PATH\n" in envd().read_text()
    shell = login_shell("dash", "ROCM_PATH")
    if shell is not None:
        assert shell == f"{home()}/rocm"


def login_shell(shell: str, name: str) -> str | None:
    """``$name`` as a login ``shell`` sees it (None when the shell is not installed)."""
    path = shutil.which(shell)
    if path is None:
        return None
    done = subprocess.run(
        [path, "-lc", f'printf %s "${name}"'],
        env={"HOME": str(home()), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        capture_output=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 0 and not re.search(rb"rror|nterminated|ubstitution", done.stderr)
    return done.stdout.decode("utf-8", "surrogateescape")


def systemd_sees(name: str) -> str | None:
    """``$name`` as the systemd user manager would get it from environment.d (None when the
    generator is not installed), through systemd's own parser and sh's reading of its output."""
    if not os.access(GENERATOR, os.X_OK):
        return None
    script = f'set -a; eval "$("{GENERATOR}")"; printf %s "${name}"'
    done = subprocess.run(
        ["sh", "-c", script],
        env={
            "HOME": str(home()),
            "XDG_CONFIG_HOME": str(home() / ".config"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        },
        capture_output=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


@pytest.mark.parametrize("value", LITERALS)
def test_other_values_are_stored_literally_and_read_back_everywhere(capsys, value: str) -> None:
    code, _, err = cli(capsys, "set", "RP_LITERAL", value)
    assert code == 0, err
    code, out, _ = cli(capsys, "get", "RP_LITERAL", "--json")
    stored = json.loads(out)["stores"]
    assert stored["profile"] == value and stored["environment.d"] == value
    for shell in ("dash", "bash"):
        seen = login_shell(shell, "RP_LITERAL")
        assert seen is None or seen == value, shell
    seen = systemd_sees("RP_LITERAL")
    assert seen is None or seen == value


def test_the_help_states_the_policy(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["env", "--help"])
    out = capsys.readouterr().out
    assert "Values are stored literally: a $ in a value stays a $" in out
    assert "only as $NAME or ${NAME}" in out


def test_a_broken_line_inside_the_block_fails_sh_n_and_nothing_is_written(capsys) -> None:
    block = f"{formats.BLOCK_BEGIN}\nexport L=\"$HOME\nexport A_VAR='1'\n{formats.BLOCK_END}\n"
    broken = USER_PROFILE + block.encode()
    profile().write_bytes(broken)
    code, _, err = cli(capsys, "set", "B_VAR", "2")
    assert code == 1
    assert f"The new {profile()} would not pass `sh -n`" in err and "nothing was" in err
    assert profile().read_bytes() == broken and not envd().exists()
    assert journal.load() == []


def test_the_users_own_broken_lines_do_not_block_a_change(capsys) -> None:
    own = USER_PROFILE + b"if true; then\n"  # the user's own syntax error, not ours
    profile().write_bytes(own)
    code, _, err = cli(capsys, "set", "B_VAR", "2")
    assert code == 0, err
    assert profile().read_bytes().startswith(own)


def test_lines_that_are_not_changed_keep_their_bytes(capsys) -> None:
    block_lines = [
        "export L='$HOME/x'\n",
        'export M="a\\$b"\n',
        "export  ODD=spacing\n",
        "# a note of mine\n",
        "export P=1\r\n",
    ]
    profile().write_bytes(
        USER_PROFILE
        + (formats.BLOCK_BEGIN + "\n" + "".join(block_lines) + formats.BLOCK_END + "\n").encode()
    )
    envd().parent.mkdir(parents=True)
    envd_lines = ["L=$HOME/x\n", 'M="a\\$b"\n', "# mine\n", "P=1\n"]
    envd().write_text("".join(envd_lines))
    assert cli(capsys, "set", "NEW_VAR", "1")[0] == 0
    assert cli(capsys, "set", "P", "2")[0] == 0
    text = profile().read_bytes().decode()
    for line in block_lines[:4]:
        assert line in text
    assert "export P='2'\r\n" in text and "export NEW_VAR='1'\n" in text
    assert envd().read_bytes().decode() == "".join(envd_lines[:3]) + "P=2\nNEW_VAR=1\n"


# ---- finding 11: a damaged undo journal -----------------------------------------------------

DAMAGED = {
    "not JSON": b"{not json",
    "a list": b"[]",
    "records not a list": b'{"entries": [{"records": 5}]}',
    "store missing": b'{"entries": [{"records": [{"path": "p", "written_sha256": "s"}]}]}',
    "sha not a string": (
        b'{"entries": [{"records": [{"store": "profile", "path": "p", "written_sha256": 1}]}]}'
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_journal_is_named_and_set_moves_it_aside(capsys, case: str) -> None:
    path = journal.journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(DAMAGED[case])
    code, _, err = cli(capsys, "undo")
    assert code == 1
    assert f"rocmpanel cannot read its undo journal {path}: " in err
    assert f"Move it aside (mv {path} {path}.bad) to continue; nothing was changed." in err
    assert path.read_bytes() == DAMAGED[case]
    code, _, err = cli(capsys, "list")
    assert code == 0 and "cannot read its undo journal" in err
    code, _, err = cli(capsys, "set", "A_VAR", "1")
    assert code == 0
    aside = sorted(path.parent.glob("env_undo.json.bad-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == DAMAGED[case]
    assert f"it was kept as {aside[0]}" in err
    assert [entry["summary"] for entry in journal.load()] == ["A_VAR=1"]
    assert cli(capsys, "undo")[0] == 0
    assert profile().read_bytes() == USER_PROFILE


# ---- finding 10: a FIFO where a store file should be ----------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("which", ["profile", "environment.d"])
def test_a_fifo_as_a_store_file_is_refused_without_hanging(capsys, which: str) -> None:
    fifo = profile() if which == "profile" else envd()
    fifo.parent.mkdir(parents=True, exist_ok=True)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    code, _, err = within(10, lambda: cli(capsys, "set", "A_VAR", "1"))
    assert code == 1
    assert f"Could not read {fifo}: it is a FIFO (named pipe), not a regular file." in err
    assert "replace it with a regular file" in err
    other = envd() if which == "profile" else profile()
    assert not other.exists() or other.read_bytes() == USER_PROFILE
    code, out, _ = within(10, lambda: cli(capsys, "list"))
    assert code == 0 and f"problem in {which}: Could not read {fifo}" in out
    code, _, err = within(10, lambda: cli(capsys, "undo"))
    assert code == 1 and "no apply to undo" in err


def test_recovery_on_load_reports_in_one_line() -> None:
    stores = make_stores("linux", home=home())
    assert recover_and_read(stores).notes == ()
