"""Nothing lost, nothing hangs: the fault figures of issue 12, measured in one run.

1. concurrent changes landed: N ``rocmpanel env set VAR_i val_i`` (different variables, one
   home) started at once; landed = exit 0, the value in ~/.profile's managed block and in
   ~/.config/environment.d/60-rocmpanel.conf, and an undo journal entry (or the journal is
   full of this run's other entries: it keeps the newest few). Then ``env undo`` must exit 0
   and remove exactly the newest entry's variable. Goal N of N at N = 40.
2. kill -9 trials: ``env set`` / ``env unset`` / ``env undo`` killed after a random delay,
   uniform over [0, 1.2 x the command's median runtime measured under the same load], then
   ``env list --json`` (which runs recovery); counted: torn stores (a file that does not
   parse, ``sh -n`` included), stores out of step with each other or with the undo journal's
   newest record, leftover ``*.tmp`` files, and a failing recovery command. Goal 0 of >= 200.
3. damaged-file cases that start cleanly: one damaged file per fresh home; every command
   that reads it must end by itself, not with the internal-error exit 70, print no
   traceback, name the file when it fails where a healthy home does not, and the smoke
   test must exit 0; the user's bytes must still exist (in place or moved aside). Goal all.
4. inputs that produced a traceback (or exit 70) or a hang (20 s), and values that
   ``env set`` accepted but that sh then cannot read back unchanged. Goal 0.
5. the slowest hang-prone read: a FIFO or /dev/zero where a file is read, minus the same
   command on a normal file (process start-up subtracted that way). Goal under 1 s.

Prints one line per figure ("name: measured (goal ...) OK/FAIL") and then the failing
cases, one line each; exit status 0 when every goal is met, 1 otherwise. Every command runs
with HOME and ROCMPANEL_HOME in private temp folders.

    python benchmarks/faults.py [--n 40] [--kills 200] [--workers 4] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _faults_damage import bad_inputs, damaged_files  # noqa: E402
from _faults_env import concurrent_changes, describe_trial, kill_trials  # noqa: E402
from _faults_hang import HANG_TIMEOUT, hang_reads  # noqa: E402

TMP_HOME = re.compile(r"\S*/rocmpanel-faults-[^/\s]+/[^/\s]+")
FULL_KILLS = 200
FULL_N = 40


class Report:
    """Figures against their goals, and the failing cases behind them."""

    def __init__(self) -> None:
        self.figures: dict[str, dict[str, Any]] = {}
        self.failures: list[str] = []
        self.notes: list[str] = []

    def figure(self, key: str, label: str, measured: Any, goal: str, ok: bool) -> None:
        self.figures[key] = {"label": label, "measured": measured, "goal": goal, "ok": ok}

    def fail(self, lines: list[str], limit: int = 40) -> None:
        lines = [TMP_HOME.sub("<home>", line) for line in lines]
        self.failures += lines[:limit]
        if len(lines) > limit:
            self.failures.append(f"... and {len(lines) - limit} more like these")

    @property
    def ok(self) -> bool:
        return all(f["ok"] for f in self.figures.values())


def concurrent_figures(report: Report, parent: Path, n: int, goal_n: int) -> None:
    result = concurrent_changes(parent, n)
    report.figure(
        "concurrent_landed",
        f"concurrent changes landed (N={n} at once)",
        f"{result.landed} of {n}",
        f"{n} of {n}, N >= {goal_n}",
        result.landed == n and n >= goal_n,
    )
    report.figure(
        "concurrent_undo_after",
        "env undo after the concurrent changes",
        result.undo_note,
        "exit 0, removes exactly the newest",
        result.undo_ok,
    )
    report.notes.append(
        f"concurrent: {result.journal_note}; all {n} finished in {result.wall:.1f} s"
    )
    report.fail(result.failures, limit=12)


def kill_figures(report: Report, parent: Path, kills: int, goal: int, workers: int) -> None:
    result = kill_trials(parent, kills, workers)
    trials = result.trials
    n = len(trials)
    report.figure("kill_trials", "kill -9 trials run", n, f">= {goal}", n >= goal and n == kills)
    in_write = result.count(lambda t: t.in_write)
    need = n // 4 if n >= 100 else 1  # a quick run has too few trials for a proportion
    report.figure(
        "kill_in_write",
        "kill -9 trials that struck while files were being written",
        f"{in_write} of {n}",
        f">= {need} (every other trial waits for the first backup or journal write)",
        in_write >= need,
    )
    counts = {
        "kill_torn": ("torn stores after kill -9", result.count(lambda t: t.torn)),
        "kill_out_of_step": (
            "stores out of step after kill -9",
            result.count(lambda t: t.out_of_step),
        ),
        "kill_journal_out_of_step": (
            "stores out of step with the undo journal after kill -9",
            result.count(lambda t: t.journal_behind),
        ),
        "kill_temp_leftovers": (
            "kill -9 trials leaving temp files after recovery",
            result.count(lambda t: t.leftovers),
        ),
        "kill_recovery_failed": (
            "recovery command (env list --json) failing after kill -9",
            result.count(lambda t: t.recovery),
        ),
    }
    for key, (label, count) in counts.items():
        report.figure(key, label, f"{count} of {n}", "0", count == 0)
    runtime = ", ".join(f"{op} {sec * 1000:.0f} ms" for op, sec in result.runtime.items())
    report.notes.append(
        f"kill -9: median runtime under load ({workers} homes at once): {runtime}; "
        f"{result.count(lambda t: t.finished_first)} of {n} had finished before the kill, "
        f"{result.count(lambda t: t.changed)} left a change on disk; {result.wall:.0f} s"
    )
    bad = [
        describe_trial(t)
        for t in trials
        if t.torn or t.out_of_step or t.journal_behind or t.leftovers or t.recovery
    ]
    report.fail(bad)


def damage_figures(report: Report, parent: Path, quick: bool, workers: int) -> None:
    result = damaged_files(parent, quick, workers)
    clean = result.clean_cases()
    total = len(result.cases)
    report.figure(
        "damaged_cases_clean",
        "damaged-file cases that start cleanly",
        f"{clean} of {total} ({len(result.runs)} command runs)",
        "all",
        clean == total and total > 0,
    )
    kept, checked = result.kept()
    report.figure(
        "user_bytes_kept",
        "damaged-file runs that kept the user's bytes",
        f"{kept} of {checked}",
        "all",
        kept == checked,
    )
    if result.seed_problem:
        report.failures.append(f"seed databases: {result.seed_problem}")
    report.fail(
        [f"{r.case} / {r.command}: {'; '.join(r.causes)}" for r in result.runs if r.causes],
        limit=80,
    )


def input_figures(report: Report, parent: Path, quick: bool, workers: int) -> None:
    runs = bad_inputs(parent, quick, workers)
    tracebacks = [r for r in runs if r.ran.traceback or r.ran.internal_error]
    hung = [r for r in runs if r.ran.hung]
    shell = [r for r in runs if r.shell_problem]
    report.figure(
        "inputs_traceback",
        "bad inputs that produced a traceback or exit 70",
        f"{len(tracebacks)} of {len(runs)}",
        "0",
        not tracebacks,
    )
    report.figure(
        "inputs_hung", "bad inputs that hung (20 s)", f"{len(hung)} of {len(runs)}", "0", not hung
    )
    report.figure(
        "values_broken_in_shell",
        "values env set accepted that sh cannot read back unchanged",
        f"{len(shell)} of {sum(1 for r in runs if r.label.startswith('env set'))}",
        "0",
        not shell,
    )
    report.fail([r.cause() for r in runs if r.cause()])


def hang_figures(report: Report, parent: Path, quick: bool, workers: int) -> None:
    timed = hang_reads(parent, quick, workers)
    slowest = max(timed, key=lambda t: t.extra)
    report.figure(
        "slowest_hang_prone_read_s",
        "slowest hang-prone read (s beyond the same command on a normal file)",
        round(slowest.extra, 3),
        f"< 1 s ({len(timed)} places, hang = {HANG_TIMEOUT:.0f} s)",
        slowest.extra < 1.0 and not slowest.hazard.hung,
    )
    report.notes.append(f"slowest hang-prone read: {slowest.label}")
    report.fail([t.problem() for t in timed if t.problem()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="concurrent env set (default 40)")
    parser.add_argument("--kills", type=int, default=None, help="kill -9 trials (default 200)")
    parser.add_argument("--workers", type=int, default=None, help="homes at once (2-4)")
    parser.add_argument("--quick", action="store_true", help="N=6, 10 kills, fewer cases")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--verbose", action="store_true", help="print the notes too")
    args = parser.parse_args(argv)
    n = args.n if args.n is not None else (6 if args.quick else FULL_N)
    kills = args.kills if args.kills is not None else (10 if args.quick else FULL_KILLS)
    workers = args.workers or max(2, min(4, os.cpu_count() or 2))
    report = Report()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rocmpanel-faults-") as tmp:
        parent = Path(tmp)
        concurrent_figures(report, parent, n, n if args.quick else FULL_N)
        kill_figures(report, parent, kills, kills if args.quick else FULL_KILLS, workers)
        damage_figures(report, parent, args.quick, workers)
        input_figures(report, parent, args.quick, workers)
        hang_figures(report, parent, args.quick, workers)
    elapsed = time.perf_counter() - started
    if args.verbose:
        for note in report.notes:
            print(f"note: {note}")
    for figure in report.figures.values():
        verdict = "OK" if figure["ok"] else "FAIL"
        print(f"{figure['label']}: {figure['measured']} (goal {figure['goal']}) {verdict}")
    if report.failures:
        print(f"failing cases ({len(report.failures)}):")
        for line in report.failures:
            print(f"  - {line}")
    print(f"all goals met: {'yes' if report.ok else 'no'} ({elapsed:.0f} s)")
    if args.json:
        data = {
            "ok": report.ok,
            "quick": args.quick,
            "seconds": round(elapsed, 1),
            "figures": report.figures,
            "failures": report.failures,
            "notes": report.notes,
        }
        print(json.dumps(data))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
