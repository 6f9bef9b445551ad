"""Smoke test of a frozen build: does the bundle start, open its window and run a worker?

    python packaging/smoke.py [dist/rocmpanel]

Every check runs the bundle's console executable with a fresh temporary ROCMPANEL_HOME
(nothing of the user's settings is read or written) and ``QT_QPA_PLATFORM=offscreen``:

1. ``--version`` prints ``rocmpanel <version>``;
2. ``--help`` lists every subcommand (their modules are imported by name at run time, so a
   missing hidden import shows here);
3. ``--smoke-test`` builds every tab, paints the window and prints its JSON line; exit 0,
   no torch imported, and nothing on stderr;
4. ``doctor --json`` prints its report (a headless command, as a frozen user runs it);
5. ``report --demo`` writes the demo's health report with its telemetry (numpy loads);
6. ``probe --python <this interpreter> --json`` runs a worker script *by path* in another
   Python: the script must be a real file in the bundle, and the child must get the
   user's LD_LIBRARY_PATH back (packaging/pyi_rth_rocmpanel_env.py), not the bundle's.

Exit status 0 when all pass; each failure is printed with the command's output.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINDOWS = sys.platform == "win32"
TIMEOUT_S = 120.0
#: A value the bundle's start-up must hand back to children unchanged (see check 6).
MARKER_LIB_DIR = "/nonexistent/rocmpanel-smoke-lib"


def executable(bundle: Path) -> Path:
    return bundle / ("rocmpanel.exe" if WINDOWS else "rocmpanel")


class Smoke:
    def __init__(self, bundle: Path, home: Path) -> None:
        self.exe = executable(bundle)
        self.bundle = bundle
        self.home = home
        self.failures: list[str] = []

    def env(self) -> dict[str, str]:
        env = dict(os.environ, ROCMPANEL_HOME=str(self.home), QT_QPA_PLATFORM="offscreen")
        env.pop("PYTHONPATH", None)  # the bundle must not lean on the build's Python
        if not WINDOWS:
            env["LD_LIBRARY_PATH"] = MARKER_LIB_DIR
        return env

    def run(
        self, *args: str, extra: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], float]:
        argv = [str(self.exe), *args]
        started = time.monotonic()
        done = subprocess.run(
            argv,
            env={**self.env(), **(extra or {})},
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return done, time.monotonic() - started

    def fail(self, what: str, done: subprocess.CompletedProcess[str]) -> None:
        self.failures.append(
            f"{what}\n  $ {shlex.join(map(str, done.args))}\n  exit {done.returncode}\n"
            f"  stdout: {done.stdout.strip()[-2000:]}\n  stderr: {done.stderr.strip()[-2000:]}"
        )

    def version(self) -> None:
        done, seconds = self.run("--version")
        if done.returncode != 0 or not done.stdout.startswith("rocmpanel "):
            self.fail("--version", done)
        print(f"--version: {done.stdout.strip()!r} in {seconds:.2f} s")

    def help(self) -> None:
        done, seconds = self.run("--help")
        wanted = ("doctor", "torch", "chat", "probe", "telemetry")
        if done.returncode != 0 or not all(word in done.stdout for word in wanted):
            self.fail("--help does not list every subcommand", done)
        print(f"--help: exit {done.returncode} in {seconds:.2f} s")

    def window(self) -> None:
        done, seconds = self.run("--smoke-test")
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        try:
            report = json.loads(lines[-1]) if lines else None
        except ValueError:
            report = None
        if done.returncode != 0 or not isinstance(report, dict):
            self.fail("--smoke-test failed", done)
        elif not report.get("tabs") or report.get("torch_imported") is not False:
            self.fail("--smoke-test report is wrong", done)
        elif done.stderr.strip():
            self.fail("--smoke-test wrote to stderr", done)
        print(f"--smoke-test: exit {done.returncode} in {seconds:.2f} s: {done.stdout.strip()}")

    def chinese(self) -> None:
        """The window in Chinese from the system's language, with the bundle's own .qm."""
        log = self.home / "data" / "logs" / "rocmpanel.log"
        before = log.read_text("utf-8", errors="replace") if log.exists() else ""
        done, seconds = self.run("--smoke-test", extra={"LANGUAGE": "zh_CN", "LANG": "zh_CN.UTF-8"})
        after = log.read_text("utf-8", errors="replace") if log.exists() else ""
        loaded = [line for line in after[len(before) :].splitlines() if "language: zh_CN" in line]
        if done.returncode != 0 or done.stderr.strip():
            self.fail("--smoke-test in zh_CN failed", done)
        elif not loaded or str(self.bundle) not in loaded[-1]:
            self.fail("--smoke-test in zh_CN did not load the bundle's translation", done)
        print(f"--smoke-test (zh_CN): exit {done.returncode} in {seconds:.2f} s: {loaded[-1:]}")

    def doctor(self) -> None:
        """A headless command end to end: its JSON report (exit 1 = problems found, as on
        any machine without a supported GPU)."""
        done, seconds = self.run("doctor", "--json")
        try:
            report = json.loads(done.stdout)
        except ValueError:
            report = None
        if done.returncode not in (0, 1) or not isinstance(report, dict) or done.stderr.strip():
            self.fail("doctor --json", done)
        print(f"doctor --json: exit {done.returncode} in {seconds:.2f} s")

    def report(self) -> None:
        """``report --demo``: the health report of the recorded GPUs with their replayed
        telemetry, which loads numpy (as the Monitor's history and plots do after the first
        paint, where --smoke-test does not reach): a stripped numpy.libs fails here."""
        out = self.home / "report.md"
        done, seconds = self.run("report", "--demo", "--out", str(out))
        text = out.read_text(encoding="utf-8") if out.is_file() else ""
        if done.returncode != 0 or "DEMO:" not in text or "telemetry peaks (" not in text:
            self.fail("report --demo", done)
        print(f"report --demo: exit {done.returncode} in {seconds:.2f} s")

    def worker(self) -> None:
        """A worker run by path in another interpreter (here: the one running this)."""
        python = sys.executable
        dump = self.home / "child-env.json"
        if not WINDOWS:  # a wrapper that records the environment the child was given
            wrapper = self.home / "python-wrapper"
            wrapper.write_text(
                "#!/bin/sh\n"
                f"{shlex.quote(python)} -c 'import json, os, sys; "
                f'json.dump(dict(os.environ), open(sys.argv[1], "w"))\' {shlex.quote(str(dump))}\n'
                f'exec {shlex.quote(python)} "$@"\n',
                encoding="utf-8",
            )
            wrapper.chmod(0o755)
            python = str(wrapper)
        done, seconds = self.run("probe", "--python", python, "--json")
        try:
            report = json.loads(done.stdout)
        except ValueError:
            report = None
        if done.returncode != 0 or not isinstance(report, dict):
            self.fail("probe: the worker did not run in the other Python", done)
        if not WINDOWS:
            child = json.loads(dump.read_text(encoding="utf-8")) if dump.exists() else {}
            if child.get("LD_LIBRARY_PATH") != MARKER_LIB_DIR:
                self.fail(
                    f"probe: the child's LD_LIBRARY_PATH is {child.get('LD_LIBRARY_PATH')!r}, "
                    f"not the user's {MARKER_LIB_DIR!r}",
                    done,
                )
        print(f"probe: exit {done.returncode} in {seconds:.2f} s")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    bundle = Path(args[0]) if args else ROOT / "dist" / "rocmpanel"
    if not executable(bundle).is_file():
        print(f"{executable(bundle)}: no such file (run packaging/build.py)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="rocmpanel-smoke-") as tmp:
        smoke = Smoke(bundle.resolve(), Path(tmp))
        for check in (
            smoke.version,
            smoke.help,
            smoke.window,
            smoke.chinese,
            smoke.doctor,
            smoke.report,
            smoke.worker,
        ):
            try:
                check()
            except subprocess.TimeoutExpired as exc:
                smoke.failures.append(f"{check.__name__}: no answer in {exc.timeout:.0f} s")
    for failure in smoke.failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    print("frozen smoke test: " + ("failed" if smoke.failures else "passed"))
    return 1 if smoke.failures else 0


if __name__ == "__main__":
    sys.exit(main())
