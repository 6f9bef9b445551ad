"""Which packages a workload Python has: ``workers/packages.py``, run briefly.

:func:`read_installed` starts the worker in the workload Python (through
``rocmpanel.base.subproc``, with the environment every job gets) and waits for its one
result; it blocks for a fraction of a second (metadata only, nothing is imported), so views
call it through ``run_in_background``. The Chat tab asks it what the chat needs, the
PyTorch tab what an install profile adds. Failures are :class:`PanelError` with plain
words: the interpreter is missing, it did not answer, or it said nothing useful.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from rocmpanel.base import subproc
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.jobs.protocol import Result, WorkerError, parse_line
from rocmpanel.jobs.spec import JobSpec, prepare

WORKER = "packages"
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Installed:
    """The workload Python and the installed version of each distribution asked about."""

    python: str
    python_version: str
    versions: Mapping[str, str | None]


def read_installed(python: str, names: tuple[str, ...]) -> Installed:
    """Ask ``python`` ("" = the panel's own) for the versions of the distributions
    ``names``. Blocking: run it off the GUI thread."""
    prepared = prepare(JobSpec(WORKER, WORKER, args=names, python=python))
    try:
        done = subproc.run(
            list(prepared.argv),
            env=dict(prepared.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise PanelError(
            translate(
                "installed",
                "The workload Python {python} did not answer within {seconds} s. "
                "Check that it starts, or pick another interpreter in Settings.",
            ).format(python=prepared.argv[0], seconds=f"{TIMEOUT_S:g}")
        ) from exc
    except OSError as exc:
        raise PanelError(
            translate(
                "installed",
                "The workload Python {python} could not start ({reason}). "
                "Pick another interpreter in Settings.",
            ).format(python=prepared.argv[0], reason=exc)
        ) from exc
    for line in done.stdout.splitlines():
        event = parse_line(line)
        if isinstance(event, Result) and event.data.get("kind") == "packages":
            return _installed(event.data)
        if isinstance(event, WorkerError):
            raise PanelError(
                translate("installed", "Listing the packages failed: {message}").format(
                    message=event.message
                )
            )
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    raise PanelError(
        translate(
            "installed",
            "The workload Python {python} did not list its packages (exit code {code}: {last}).",
        ).format(python=prepared.argv[0], code=done.returncode, last=last[:200])
    )


def _installed(data: Mapping[str, object]) -> Installed:
    raw = data.get("versions")
    versions: dict[str, str | None] = {}
    if isinstance(raw, Mapping):
        for name, value in raw.items():
            versions[str(name)] = value if isinstance(value, str) else None
    return Installed(str(data.get("python") or ""), str(data.get("python_version") or ""), versions)
