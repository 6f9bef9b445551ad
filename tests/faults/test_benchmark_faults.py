"""benchmarks/faults.py: its quick run meets every goal, and its checks catch what they claim.

The quick run (N=6 concurrent changes, 10 kill -9 trials, a subset of the damaged files,
bad inputs and hang-prone reads) runs in a subprocess with its own private homes. The other
tests feed the benchmark's own store checks torn and out-of-step files, so a figure of 0
means "none found" and not "not looked for".
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"

FIGURES = {
    "concurrent_landed",
    "concurrent_undo_after",
    "kill_trials",
    "kill_in_write",
    "kill_torn",
    "kill_out_of_step",
    "kill_journal_out_of_step",
    "kill_temp_leftovers",
    "kill_recovery_failed",
    "damaged_cases_clean",
    "user_bytes_kept",
    "inputs_traceback",
    "inputs_hung",
    "values_broken_in_shell",
    "slowest_hang_prone_read_s",
}


@pytest.fixture
def common(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("_faults_common")


@pytest.fixture
def home(common: ModuleType, tmp_path: Path) -> object:
    home = common.Home.make(tmp_path, "t")
    common.write(home.profile, common.USER_PROFILE)
    return home


def test_quick_run_prints_every_figure_and_meets_every_goal() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "faults.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),  # HOME and ROCMPANEL_HOME are this test's private folders
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(data["figures"]) == FIGURES
    for key, figure in data["figures"].items():
        assert {"label", "measured", "goal", "ok"} <= set(figure), key
    assert data["quick"] is True
    assert data["figures"]["kill_trials"]["measured"] == 10
    assert data["figures"]["concurrent_landed"]["measured"].endswith("of 6")
    failing = [f"{f['label']}: {f['measured']}" for f in data["figures"].values() if not f["ok"]]
    assert not failing, "\n".join([*failing, "failing cases:", *data["failures"]])
    assert data["ok"] is True
    assert done.returncode == 0


def test_a_healthy_store_pair_reads_back_in_step(common: ModuleType, home: object) -> None:
    begin, end = common.BLOCK_BEGIN, common.BLOCK_END
    block = f"{begin}\n# note\nexport A='x y'\nexport B=\"q\\$\"\n{end}\n"
    common.write(home.profile, common.USER_PROFILE + block.encode())
    common.write(home.envd, b'# header\nA="x y"\nB=q$$\n')
    state = common.read_state(home)
    assert state.torn == []
    assert state.profile == {"A": "x y", "B": "q$"}
    assert state.envd == {"A": "x y", "B": "q$$"}
    assert common.envd_value(state.envd["B"]) == "q$"


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ("{begin}\nexport A=1\n", "block markers broken (1 begin, 0 end)"),
        ("{begin}\nexport A=1\n{begin}\n{end}\n", "block markers broken (2 begin, 1 end)"),
        ("{begin}\nexport A='x\n{end}\n", "unterminated single quote"),
        ("{begin}\nexport A=1\nA=2 B\n{end}\n", "in the block is not an export"),
        ("{begin}\nexport A=1\n{end}", "does not end with a newline"),
    ],
)
def test_a_torn_profile_is_reported(common: ModuleType, home: object, block: str, why: str) -> None:
    text = block.format(begin=common.BLOCK_BEGIN, end=common.BLOCK_END)
    common.write(home.profile, common.USER_PROFILE + text.encode())
    state = common.read_state(home)
    assert len(state.torn) == 1
    assert why in state.torn[0]


def test_lost_user_lines_torn_envd_and_bad_journal_are_reported(
    common: ModuleType, home: object
) -> None:
    common.write(home.profile, b"export EDITOR=vi\n")  # the user's first lines are gone
    common.write(home.envd, b'A=1\nA="unterminated\n')
    common.write(home.journal, b'{"version": 1, "entries": [')
    torn = common.read_state(home).torn
    assert len(torn) == 3
    assert "lost the user's own lines" in torn[0]
    assert "60-rocmpanel.conf line 2: unterminated double quote" in torn[1]
    assert "env_undo.json is not valid JSON" in torn[2]


def test_stores_out_of_step_and_temp_leftovers_are_reported(
    common: ModuleType, home: object
) -> None:
    block = f"{common.BLOCK_BEGIN}\nexport A='1'\nexport B='2'\n{common.BLOCK_END}\n"
    common.write(home.profile, common.USER_PROFILE + block.encode())
    common.write(home.envd, b"A=1\nC=3\n")
    common.write(home.user / ".profile.abc123.tmp", b"x")
    common.write(home.data / "backups" / ".x.bak.q1.tmp", b"x")
    state = common.read_state(home)
    assert state.out_of_step() == [
        "B: profile='2' environment.d=None",
        "C: profile=None environment.d='3'",
    ]
    assert common.temp_leftovers(home) == [
        "panel/data/backups/.x.bak.q1.tmp",
        "user/.profile.abc123.tmp",
    ]


def test_environment_d_values_expand_as_systemd_does(common: ModuleType) -> None:
    env = {"HOME": "/home/u"}
    assert common.envd_value("a$$b", env) == "a$b"
    assert common.envd_value("a$b", env) == "a"
    assert common.envd_value("${HOME}/x:$HOME", env) == "/home/u/x:/home/u"
    assert common.envd_value("cost $", env) == "cost $"


def test_a_value_sh_cannot_read_back_is_reported(
    common: ModuleType, home: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    damage = importlib.import_module("_faults_damage")
    block = f'{common.BLOCK_BEGIN}\nexport X="${{FOO"\n{common.BLOCK_END}\n'
    common.write(home.profile, common.USER_PROFILE + block.encode())
    assert damage._shell_check(home, "X", "${FOO").startswith(
        "accepted, and sh then fails on ~/.profile"
    )
    block = f"{common.BLOCK_BEGIN}\nexport X='a$b'\n{common.BLOCK_END}\n"
    common.write(home.profile, common.USER_PROFILE + block.encode())
    common.write(home.envd, b"X=a$b\n")
    assert damage._shell_check(home, "X", "a$b") == (
        "accepted, and environment.d gives 'a' (written 'a$b')"
    )
    common.write(home.envd, b"X=a$$b\n")
    assert damage._shell_check(home, "X", "a$b") == ""
