"""Command line entry point: no arguments opens the window, subcommands run headless."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from rocmpanel import __version__

# The feature modules that add a subcommand, in the order ``--help`` lists them. Each
# defines ``register(subparsers)``, which adds its parser and sets ``func(args) -> int``;
# it imports only what argparse needs at the top, so ``--help`` and every command stay fast.
COMMANDS: tuple[str, ...] = (
    "rocmpanel.setup.cli",
    "rocmpanel.envvars.cli",
    "rocmpanel.monitor.cli",
    "rocmpanel.pytorch.cli",
    "rocmpanel.chat.cli",
    "rocmpanel.chat.serve_cli",
    "rocmpanel.tuning.cli",
    "rocmpanel.setup.probe_cli",
    "rocmpanel.multigpu.topo_cli",
    "rocmpanel.multigpu.collective_cli",
    "rocmpanel.multigpu.launch_cli",
    "rocmpanel.knowledge.cli",
    "rocmpanel.shell.report_cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocmpanel",
        description="Control panel for PyTorch and local LLMs on AMD GPUs with ROCm. "
        "Without a command it opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"rocmpanel {__version__}")
    parser.add_argument(
        "--smoke-test",
        action="store_true",
        help="open the window, wait for the first paint, print a JSON line and exit",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="open the window on recorded GPUs with a replayed workload (nothing of this "
        "machine is changed: settings and files go to a temporary folder)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


# What opens the window. Those need no parser: building it imports every feature's cli
# module and adds their subcommands (~40 ms the window's first frame would wait for).
WINDOW_ARGV: tuple[tuple[str, ...], ...] = (
    (),
    ("--smoke-test",),
    ("--demo",),
    ("--demo", "--smoke-test"),
    ("--smoke-test", "--demo"),
)


def main(argv: Sequence[str] | None = None) -> int:
    given = tuple(sys.argv[1:] if argv is None else argv)
    if given in WINDOW_ARGV:
        return _run_gui(smoke_test="--smoke-test" in given, demo="--demo" in given)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        return _run_gui(smoke_test=args.smoke_test, demo=args.demo)
    if args.demo:
        parser.error("--demo opens the window; it does not go with a command")
    return _run_command(args)


def _run_gui(smoke_test: bool, demo: bool = False) -> int:
    from rocmpanel.jobs import lifetime
    from rocmpanel.shell.app import run_gui

    return lifetime.exit_code(run_gui(smoke_test=smoke_test, demo=demo))


def _run_command(args: argparse.Namespace) -> int:
    """Run a headless command. SIGTERM and SIGHUP end its jobs (their process groups) and
    interrupt it as Ctrl+C does, so its own clean-up runs; it then exits with 128 + the
    signal's number (Ctrl+C: 130)."""
    from rocmpanel.jobs import lifetime

    try:
        with lifetime.ending_jobs_on_signals():
            code = _call(args)
    except KeyboardInterrupt:  # a signal's interruption raised while handling another
        code = 130
    signum = lifetime.received_signal()
    if signum is not None:
        import contextlib
        import signal

        ended = lifetime.jobs_ended()
        jobs = f"; {ended} background job{'s' if ended != 1 else ''} ended" if ended else ""
        with contextlib.suppress(OSError, ValueError):  # the terminal may be gone (SIGHUP)
            print(
                f"rocmpanel {args.command}: stopped by {signal.Signals(signum).name}{jobs}.",
                file=sys.stderr,
            )
    return lifetime.exit_code(code)


def _call(args: argparse.Namespace) -> int:
    from rocmpanel.jobs import lifetime

    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: never a traceback
        if lifetime.received_signal() is not None:
            return 1  # e.g. printing to a terminal that hung up: the signal says why
        return _report_unexpected(args.command, exc)


def _report_unexpected(command: str, exc: Exception) -> int:
    """Print one sentence for a failure no command caught, and keep the traceback in the log
    (exit status 70, EX_SOFTWARE). A ``PanelError`` is a known failure: its message only."""
    from rocmpanel.base.errors import PanelError

    if isinstance(exc, PanelError):
        print(f"rocmpanel {command}: {exc.message}", file=sys.stderr)
        return 1
    where = _log_traceback(exc)
    print(
        f"rocmpanel {command}: unexpected error ({type(exc).__name__}: {exc}). "
        f"This is a bug in rocmpanel; {where}",
        file=sys.stderr,
    )
    return 70


def _log_traceback(exc: Exception) -> str:
    import traceback

    from rocmpanel.base import paths

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    path = paths.log_dir() / "cli-errors.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError:
        return "the details could not be saved."
    return f"the details are in {path}."


def gui_main() -> None:
    """Entry point of the ``rocmpanel-gui`` script (no console window on Windows)."""
    sys.exit(main())
