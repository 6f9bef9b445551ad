"""Mutation testing of the modules that decide things (issue 19), with mutmut.

For each module of tests/mutation/modules.toml: copy the project into a temp folder (the
working tree is never touched, so several runs can go at once), tell mutmut which files to
mutate and which tests may kill their mutants, run it, and count. A mutant counts as killed
when a test failed, timed out or crashed on it; survivors and mutants that no test reached
count against the score; survivors listed in tests/mutation/equivalent/*.toml (with why) are
left out of it. Prints one line per module and exits 1 when one is under the goal.

    python scripts/mutation.py [MODULE ...] [--goal 80] [--max-children N]
                               [--show-survivors] [--keep DIR] [--json FILE]

Run it through ``bash scripts/mutation.sh``, which installs mutmut into the test
environment first. It is not part of every CI run: all seven modules take about 30 minutes
on two cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "tests" / "mutation" / "modules.toml"
EQUIVALENT = ROOT / "tests" / "mutation" / "equivalent"
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
SKIPPED = {"skipped", "not checked", "check was interrupted by user"}


@dataclass
class Module:
    name: str
    files: list[str]
    tests: list[str]


@dataclass
class Count:
    module: str
    total: int = 0
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    other: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def counted(self) -> int:
        return self.killed + len(self.survived) + len(self.untested)

    @property
    def score(self) -> float:
        return 100.0 * self.killed / self.counted if self.counted else 100.0


def load_modules() -> dict[str, Module]:
    data = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    return {
        name: Module(name, list(entry["files"]), list(entry["tests"]))
        for name, entry in data["module"].items()
    }


def load_equivalent() -> dict[str, str]:
    """Mutant name -> why it is equivalent, from every tests/mutation/equivalent/*.toml."""
    found: dict[str, str] = {}
    for path in sorted(EQUIVALENT.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for entry in data.get("equivalent", []):
            if not str(entry.get("why", "")).strip():
                raise SystemExit(f"{path}: {entry.get('mutant')} has no 'why'")
            found[str(entry["mutant"])] = str(entry["why"])
    return found


def project_files() -> list[str]:
    """Tracked files and new ones git does not ignore (what a commit would hold)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def make_workdir(module: Module, base: Path) -> Path:
    work = base / module.name
    # mutmut caches which tests reach each function in mutants/: a reused folder would not
    # run tests added since, so every run starts from a fresh copy.
    shutil.rmtree(work, ignore_errors=True)
    present = [name for name in module.tests if (ROOT / name).exists()]
    for name in sorted(set(module.tests) - set(present)):
        print(f"{module.name}: test path {name} does not exist; left out", flush=True)
    for name in project_files():
        if name.startswith(("mutants/", ".venv")):
            continue
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    # rocmpanel.resources is the top-level resources/ folder (package-dir in pyproject);
    # mutmut imports the package from its copy of the source tree, so put it there.
    shutil.copytree(work / "resources", work / "rocmpanel" / "resources", dirs_exist_ok=True)
    config = (
        "\n[tool.mutmut]\n"
        'source_paths = ["rocmpanel"]\n'
        f"only_mutate = {json.dumps(module.files)}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(present)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]\n'
        # Workers forked from the process that ran the whole selection once (mutmut's
        # default) inherit what those tests left behind, and some mutants fail for that
        # alone: an equivalent mutant of make_stores was "killed" that way. A fork server
        # that has only collected the tests gives every mutant a clean start.
        'process_isolation = "forkserver"\n'
    )
    with (work / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(config)
    return work


def run_module(module: Module, base: Path, max_children: int, equivalent: dict[str, str]) -> Count:
    from mutmut.stats import status_by_exit_code  # the test environment has mutmut

    work = make_workdir(module, base)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONDONTWRITEBYTECODE="1")
    mutmut = Path(sys.executable).with_name("mutmut")
    started = time.monotonic()
    with (work / "mutmut.log").open("wb") as log:
        done = subprocess.run(
            [str(mutmut), "run", "--max-children", str(max_children)],
            cwd=work,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    count = Count(module.name, seconds=time.monotonic() - started)
    if done.returncode != 0:
        tail = (work / "mutmut.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"mutmut failed for {module.name} (exit {done.returncode}):\n{tail}")
    for name in module.files:
        meta = work / "mutants" / (name + ".meta")
        if not meta.exists():
            raise SystemExit(f"{module.name}: mutmut left no results for {name}")
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        for mutant, code in sorted(codes.items()):
            status = status_by_exit_code[code]
            count.total += 1
            if status in KILLED:
                count.killed += 1
            elif status == "survived" and mutant in equivalent:
                count.equivalent.append(mutant)
            elif status == "survived":
                count.survived.append(mutant)
            elif status == "no tests":
                count.untested.append(mutant)
            elif status in SKIPPED:
                count.other[mutant] = status
            else:  # "suspicious": neither a clean kill nor a pass; it counts against
                count.survived.append(mutant)
    return count


def show(work: Path, mutant: str) -> str:
    mutmut = Path(sys.executable).with_name("mutmut")
    done = subprocess.run(
        [str(mutmut), "show", mutant], cwd=work, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or done.stderr.strip()


def main(argv: list[str] | None = None) -> int:
    modules = load_modules()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=", ".join(modules))
    parser.add_argument("--goal", type=float, default=80.0, help="percent (default 80)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--show-survivors", action="store_true", help="print their diffs")
    parser.add_argument("--keep", type=Path, help="keep the work folders here")
    parser.add_argument("--json", type=Path, help="also write the counts here")
    args = parser.parse_args(argv)
    unknown = [name for name in args.modules if name not in modules]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}; known: {', '.join(modules)}")
    if args.max_children < 1:
        parser.error("--max-children must be at least 1")
    if (
        importlib.util.find_spec("mutmut") is None
        or not Path(sys.executable).with_name("mutmut").exists()
    ):
        parser.error(f"mutmut is not installed for {sys.executable}: run bash scripts/mutation.sh")
    chosen = [modules[name] for name in args.modules] if args.modules else list(modules.values())
    equivalent = load_equivalent()

    base = args.keep or Path(tempfile.mkdtemp(prefix="rocmpanel-mutation-"))
    base.mkdir(parents=True, exist_ok=True)
    counts: list[Count] = []
    started = time.monotonic()
    try:
        for module in chosen:
            print(f"{module.name}: mutating {', '.join(module.files)} ...", flush=True)
            count = run_module(module, base, args.max_children, equivalent)
            counts.append(count)
            verdict = "OK" if count.score >= args.goal else "FAIL"
            print(
                f"{module.name}: {count.score:.1f} % killed ({count.killed} of {count.counted};"
                f" {len(count.survived)} survived, {len(count.untested)} reached by no test,"
                f" {len(count.equivalent)} equivalent, {count.total} mutants,"
                f" {count.seconds:.0f} s) {verdict}",
                flush=True,
            )
            if count.other:  # mutmut did not run these: say so rather than drop them
                print(f"{module.name}: {len(count.other)} mutants not run:", flush=True)
                for mutant, status in sorted(count.other.items()):
                    print(f"  {mutant}: {status}", flush=True)
            if args.show_survivors:
                for mutant in count.survived + count.untested:
                    print(show(base / module.name, mutant), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)

    listed_here = {m for c in counts for m in c.equivalent}
    chosen_prefixes = tuple(
        ".".join(Path(f).with_suffix("").parts) + "." for m in chosen for f in m.files
    )
    stale = [m for m in equivalent if m.startswith(chosen_prefixes) and m not in listed_here]
    for mutant in stale:
        print(
            f"tests/mutation/equivalent: {mutant} did not survive this run"
            " (killed or gone): remove it"
        )
    elapsed = time.monotonic() - started
    print(f"total: {len(counts)} modules in {elapsed:.0f} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "module": c.module,
                        "score": round(c.score, 1),
                        "killed": c.killed,
                        "counted": c.counted,
                        "mutants": c.total,
                        "survived": c.survived,
                        "untested": c.untested,
                        "equivalent": c.equivalent,
                        "seconds": round(c.seconds, 1),
                    }
                    for c in counts
                ],
                indent=2,
            ),
            encoding="utf-8",
        )
    failed = [c.module for c in counts if c.score < args.goal] + (["stale"] if stale else [])
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted: no score", file=sys.stderr)
        sys.exit(130)
