"""Figures 1 and 2 of benchmarks/faults.py: concurrent ``env set`` and kill -9 during writes."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _faults_common import (
    USER_PROFILE,
    Home,
    Ran,
    entry_mentions,
    finish,
    read_state,
    run,
    start,
    temp_leftovers,
    write,
)


def journal_keeps() -> int | None:
    """How many entries rocmpanel's undo journal keeps (None: no limit known)."""
    try:
        from rocmpanel.envvars import journal
    except ImportError:
        return None
    keep = getattr(journal, "KEEP_ENTRIES", None)
    return keep if isinstance(keep, int) and keep > 0 else None


def new_user(parent: Path, name: str) -> Home:
    home = Home.make(parent, name)
    write(home.profile, USER_PROFILE)
    return home


# ---- 1. concurrent changes ---------------------------------------------------------------


@dataclass
class Concurrent:
    n: int
    landed: int = 0
    undo_ok: bool = False
    undo_note: str = ""
    journal_note: str = ""
    wall: float = 0.0
    failures: list[str] = field(default_factory=list)


def concurrent_changes(parent: Path, n: int) -> Concurrent:
    """N ``env set`` of N different variables started at once in one home."""
    result = Concurrent(n)
    home = new_user(parent, "concurrent")
    width = len(str(max(n - 1, 1)))
    names = [f"RPBENCH_C{i:0{width}d}" for i in range(n)]
    values = [f"val_{i:0{width}d}" for i in range(n)]
    started = time.perf_counter()
    # Every process is started before any has finished importing (each takes ~0.1 s to
    # reach its write), so their writes fall together.
    procs = [
        (name, start(home, ["env", "set", name, value]))
        for name, value in zip(names, values, strict=True)
    ]
    done: dict[str, Ran] = {}
    for name, proc in procs:
        done[name] = finish(proc, ("env", "set", name), started, timeout=120.0)
    result.wall = time.perf_counter() - started
    state = read_state(home)
    keep = journal_keeps()
    entries = state.journal
    in_journal = {name for name in names if any(entry_mentions(e, name) for e in entries)}
    # The journal keeps only the newest KEEP entries: when it is full and every entry in it
    # belongs to a distinct variable of this run, the missing ones were trimmed as designed.
    distinct = len(in_journal) == len(entries)
    trimmed_ok = keep is not None and len(entries) >= keep and distinct
    result.journal_note = (
        f"journal holds {len(entries)} entries for {len(in_journal)} of the {n} variables"
        + (f" (it keeps the newest {keep})" if keep is not None else "")
    )
    for tear in state.torn:
        result.failures.append(f"torn store after the concurrent run: {tear}")
    for name, value in zip(names, values, strict=True):
        ran = done[name]
        causes = []
        if ran.hung:
            causes.append("still running after 120 s")
        elif ran.rc != 0:
            causes.append(f"exit {ran.rc}: {ran.last_line()}")
        if state.profile.get(name) != value:
            causes.append(f"~/.profile has {state.profile.get(name)!r}")
        if state.envd.get(name) != value:
            causes.append(f"environment.d has {state.envd.get(name)!r}")
        if name not in in_journal and not trimmed_ok:
            causes.append("no undo journal entry")
        if causes:
            result.failures.append(f"{name}: " + "; ".join(causes))
        else:
            result.landed += 1
    result.undo_ok, result.undo_note = _undo_after(home, names, state)
    if not result.undo_ok:
        result.failures.append(f"env undo after the concurrent run: {result.undo_note}")
    home.remove()
    return result


def _undo_after(home: Home, names: list[str], before: Any) -> tuple[bool, str]:
    """``env undo`` must exit 0 and remove exactly the variable of the newest journal entry."""
    if not before.journal:
        return False, "the journal is empty, nothing to undo"
    last = before.journal[-1]
    targets = [name for name in names if entry_mentions(last, name)]
    ran = run(home, ["env", "undo"], timeout=30.0)
    if ran.hung:
        return False, "env undo hung"
    if ran.rc != 0:
        return False, f"env undo exit {ran.rc}: {ran.last_line()}"
    after = read_state(home)
    gone_p = {n for n in names if n in before.profile and n not in after.profile}
    gone_e = {n for n in names if n in before.envd and n not in after.envd}
    if len(targets) != 1:
        return False, f"the newest journal entry names {targets or 'no variable of this run'}"
    if gone_p != set(targets) or gone_e != set(targets):
        return False, (
            f"undo removed {sorted(gone_p)} from ~/.profile and {sorted(gone_e)} from "
            f"environment.d; expected exactly {targets[0]}"
        )
    if len(after.journal) != len(before.journal) - 1:
        return False, f"journal went from {len(before.journal)} to {len(after.journal)} entries"
    return True, f"undid {targets[0]} only"


# ---- 2. kill -9 during writes ------------------------------------------------------------

KILL_VARS = ("RPBENCH_K0", "RPBENCH_K1", "RPBENCH_K2")
# set, set, unset, undo ...: over 3 variables, so sets replace and add, unsets hit real ones.
PATTERN = ("set", "set", "unset", "undo")


def op_args(trial: int) -> list[str]:
    op = PATTERN[trial % len(PATTERN)]
    name = KILL_VARS[trial % len(KILL_VARS)]
    if op == "set":
        return ["env", "set", name, f"v{trial}"]
    if op == "unset":
        return ["env", "unset", name]
    return ["env", "undo"]


@dataclass
class Trial:
    index: int
    command: str
    delay: float
    finished_first: bool = False  # the command had already exited when the kill came
    aimed: bool = False  # the kill waited for the command's first write (backup or journal)
    in_write: bool = False  # ... saw it, and the command was still running when killed
    changed: bool = False  # the killed command left a change on disk (after recovery)
    torn: list[str] = field(default_factory=list)
    out_of_step: list[str] = field(default_factory=list)
    journal_behind: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    recovery: str = ""  # why the next command (env list --json) failed, '' when it did not


@dataclass
class Kills:
    trials: list[Trial] = field(default_factory=list)
    runtime: dict[str, float] = field(default_factory=dict)
    calibration_failures: list[str] = field(default_factory=list)
    workers: int = 0
    wall: float = 0.0

    def count(self, what: Callable[[Trial], Any]) -> int:
        return sum(1 for t in self.trials if what(t))


def _journal_behind(home: Home, state: Any) -> list[str]:
    """Stores whose bytes are not what the newest journal record for them says was written.

    After a completed apply the newest record of each store names the bytes it wrote; an
    undo pops that entry and puts back the bytes the entry below it wrote. A store that
    holds other bytes changed with no undo entry to take it back (finding 7).
    """
    import hashlib

    problems = []
    raw = {"environment.d": state.raw.get("envd"), "profile": state.raw.get("profile")}
    for store, data in raw.items():
        newest = None
        for entry in reversed(state.journal):
            records = entry.get("records") if isinstance(entry, dict) else None
            if not isinstance(records, list):
                continue
            mine = [r for r in records if isinstance(r, dict) and r.get("store") == store]
            if mine:
                newest = mine[-1]
                break
        if newest is None or "written_sha256" not in newest:
            continue
        current = None if data is None else hashlib.sha256(data).hexdigest()
        if current != newest["written_sha256"]:
            problems.append(f"{store} differs from the newest undo record for it")
    return problems


def _calibrate(parent: Path, workers: int, rounds: int) -> tuple[dict[str, float], list[str]]:
    """Median wall time of each kind of command, measured under the trials' own load
    (``workers`` homes at once), so that kill delays span the command's real runtime; and
    the runs that failed although nobody killed them (then the trials measure nothing)."""
    times: dict[str, list[float]] = {"set": [], "unset": [], "undo": []}
    failed: list[str] = []
    lock = threading.Lock()

    def one(worker: int) -> None:
        home = new_user(parent, f"calibrate{worker}")
        for trial in range(rounds * len(PATTERN)):
            args = op_args(trial)
            op = PATTERN[trial % len(PATTERN)]
            ran = run(home, args, timeout=30.0)
            # undo may find nothing to undo (exit 1); set and unset must work
            bad = ran.hung or ran.traceback or ran.rc not in ((0, 1) if op == "undo" else (0,))
            with lock:
                times[op].append(ran.wall)
                if bad:
                    failed.append(f"{ran.command()} (not killed): exit {ran.rc}, {ran.last_line()}")
        home.remove()

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(workers)))
    return {op: statistics.median(values) for op, values in times.items()}, failed


def kill_trials(parent: Path, total: int, workers: int, seed: int = 12) -> Kills:
    """``total`` kill -9 trials spread over ``workers`` homes, each followed by recovery."""
    kills = Kills(workers=workers)
    started = time.perf_counter()
    kills.runtime, kills.calibration_failures = _calibrate(parent, workers, rounds=2)
    per_worker = [list(range(w, total, workers)) for w in range(workers)]

    def worker(indexes: list[int]) -> list[Trial]:
        rng = random.Random(seed * 1000 + (indexes[0] if indexes else 0))
        home = new_user(parent, f"kill{indexes[0] if indexes else 0}")
        out = [_one_kill(home, t, rng, kills.runtime) for t in indexes]
        home.remove()
        return out

    with ThreadPoolExecutor(workers) as pool:
        for trials in pool.map(worker, per_worker):
            kills.trials += trials
    kills.trials.sort(key=lambda t: t.index)
    kills.wall = time.perf_counter() - started
    return kills


def _one_kill(home: Home, index: int, rng: random.Random, runtime: dict[str, float]) -> Trial:
    args = op_args(index)
    op = PATTERN[index % len(PATTERN)]
    # Every other trial is aimed at the writes: most of a command's runtime is Python's
    # start-up, so uniform delays alone seldom land while files are being written.
    aimed = index % 2 == 1
    delay = rng.uniform(0.0, 0.03 if aimed else 1.2 * runtime[op])
    trial = Trial(index, "rocmpanel " + " ".join(args), delay, aimed=aimed)
    before = read_state(home).raw
    watched = _write_marks(home)
    proc = start(home, args)
    if aimed:
        deadline = time.perf_counter() + 3 * runtime[op] + 1.0
        while proc.poll() is None and time.perf_counter() < deadline:
            if _write_marks(home) != watched:
                trial.in_write = True
                break
            time.sleep(0.0005)
    time.sleep(delay)
    trial.finished_first = proc.poll() is not None
    trial.in_write = trial.in_write and not trial.finished_first
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)  # the command itself, as `kill -9 PID` would
    proc.communicate()
    recovery = run(home, ["env", "list", "--json"], timeout=20.0)
    if recovery.hung:
        trial.recovery = "env list --json hung"
    elif recovery.rc != 0 or recovery.traceback:
        trial.recovery = f"env list --json exit {recovery.rc}: {recovery.last_line()}"
    else:
        try:
            json.loads(recovery.out)
        except ValueError:
            trial.recovery = "env list --json printed no JSON"
    state = read_state(home)
    trial.changed = state.raw != before
    trial.torn = list(state.torn)
    if not state.torn:
        trial.out_of_step = state.out_of_step()
        trial.journal_behind = _journal_behind(home, state)
    trial.leftovers = temp_leftovers(home)
    if state.torn or trial.out_of_step or trial.journal_behind:
        _reset(home)  # start the next trial from a sound state, so each trial counts once
    else:
        for leftover in trial.leftovers:
            (home.root / leftover).unlink(missing_ok=True)
    return trial


def _write_marks(home: Home) -> tuple[object, ...]:
    """What changes when a command starts writing: the backups folder and the journal."""
    backups = home.panel / "data" / "backups"
    try:
        names = tuple(sorted(p.name for p in backups.iterdir()))
    except OSError:
        names = ()
    try:
        info = home.journal.stat()
        journal: object = (info.st_mtime_ns, info.st_size, info.st_ino)
    except OSError:
        journal = None
    return names, journal


def _reset(home: Home) -> None:
    for path in (home.envd, home.journal):
        path.unlink(missing_ok=True)
    write(home.profile, USER_PROFILE)
    for leftover in temp_leftovers(home):
        (home.root / leftover).unlink(missing_ok=True)


def describe_trial(trial: Trial) -> str:
    causes = trial.torn + trial.out_of_step + trial.journal_behind
    if trial.leftovers:
        causes.append("temp files left: " + ", ".join(trial.leftovers[:3]))
    if trial.recovery:
        causes.append(trial.recovery)
    return (
        f"kill #{trial.index} ({trial.command}, killed at {trial.delay * 1000:.0f} ms): "
        + re.sub(r"\s+", " ", "; ".join(causes))
    )
