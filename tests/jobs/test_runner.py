"""The Qt side of jobs: typed check events reach the GUI thread as ``check_done``; a flood's
backlog arrives in bounded batches, in order; closing stops every job quickly and leaves no
child process behind; the child-process side is imported only for the first job."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from rocmpanel.base.enums import CheckStatus
from rocmpanel.jobs.protocol import CheckDone
from rocmpanel.jobs.runner import CLOSE_GRACE_S, KILL_MARGIN_S, JobManager
from rocmpanel.jobs.spec import JobSpec

SCRIPTS = Path(__file__).resolve().parents[1] / "workers" / "scripts"


def test_checks_arrive_in_order_and_unknown_lines_only_reach_the_log(qtbot) -> None:
    manager = JobManager(grace_s=2.0)
    try:
        job = manager.start(JobSpec("checks", SCRIPTS / "checks.py"))
        checks: list[CheckDone] = []
        job.check_done.connect(checks.append)
        with qtbot.waitSignal(job.finished, timeout=30_000) as blocker:
            pass
        assert blocker.args[0].was_successful(), str(blocker.args[0])
        assert [(c.id, c.name, c.status) for c in checks] == [
            ("a", "A", CheckStatus.PASS),
            ("b", "B", CheckStatus.FAIL),  # a status this panel does not know is a failure
        ]
        logged = [line.message for line in job.log]
        assert any("from_the_future" in m for m in logged)
        assert any("no id" in m for m in logged)
        assert not any('"id": "a"' in m for m in logged)  # checks are events, not log lines
    finally:
        manager.shutdown()


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    """The pids still alive after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = [p for p in pids if not _gone(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if not _gone(p)]
    return alive


def _child_of(job) -> int | None:
    """The pid hang.py reports for its own child, once it has."""
    said = [line.message for line in job.log if line.message.startswith("child ")]
    return int(said[0].split()[1]) if said else None


def test_shutdown_kills_a_wedged_job_within_the_close_grace(qtbot) -> None:
    # hang.py ignores terminate and has a child: only the kill takes them. The job's own
    # grace (3 s) is for a Cancel click; closing does not wait for it.
    manager = JobManager(grace_s=3.0)
    job = manager.start(JobSpec("hang", SCRIPTS / "hang.py"))
    qtbot.waitUntil(lambda: _child_of(job) is not None, timeout=30_000)
    child = _child_of(job)
    assert child is not None
    assert job.pid is not None
    started = time.monotonic()
    manager.shutdown()
    took = time.monotonic() - started
    assert took < CLOSE_GRACE_S + KILL_MARGIN_S + 0.3, took
    assert _wait_gone([job.pid, child], 5) == []


_PANEL = """
import json, sys
from pathlib import Path
from PySide6.QtCore import QCoreApplication
from rocmpanel.jobs.runner import JobManager
from rocmpanel.jobs.spec import JobSpec

app = QCoreApplication([])
manager = JobManager(grace_s=30.0)
job = manager.start(JobSpec("hang", Path(sys.argv[1])))
said = []
while not said:
    app.processEvents()
    said = [line.message for line in job.log if line.message.startswith("child ")]
child = int(said[0].split()[1])
print(json.dumps([job.pid, child]), flush=True)
manager.shutdown()
sys.exit(0)  # at once: the daemon threads die with the process
"""


def test_no_child_outlives_a_panel_that_exits_right_after_shutdown() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PANEL, str(SCRIPTS / "hang.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pids = json.loads(done.stdout.splitlines()[-1])
    alive = _wait_gone(pids, 5)
    for pid in alive:  # never leave them behind, even when the test fails
        psutil.Process(pid).kill()
    assert alive == []


def test_a_backlog_reaches_the_gui_in_bounded_batches_in_order(qtbot) -> None:
    from rocmpanel.jobs.runner import DRAIN_LIMIT

    lines = 20_000
    manager = JobManager(grace_s=2.0)
    try:
        job = manager.start(JobSpec("flood", SCRIPTS / "flood.py", args=(str(lines),)))
        seen: list[tuple[str, Any]] = []
        shared: list[bool] = []
        job.log_added.connect(lambda batch: seen.append(("log", batch)))
        job.log_added.connect(lambda batch: shared.append(batch is seen[-1][1]))
        job.result_received.connect(lambda result: seen.append(("result", result)))
        job.finished.connect(lambda outcome: seen.append(("finished", outcome)))
        time.sleep(1.0)  # a busy GUI thread: the whole flood waits in the queue
        with qtbot.waitSignal(job.finished, timeout=60_000) as blocker:
            pass
        assert blocker.args[0].was_successful(), str(blocker.args[0])
        batches = [batch for kind, batch in seen if kind == "log"]
        assert max(len(batch) for batch in batches) <= DRAIN_LIMIT  # no one long slot call
        assert all(shared)  # one list for every receiver, not a converted copy each
        worker = [line.message for batch in batches for line in batch if line.stream == "worker"]
        assert [int(m.split()[1]) for m in worker] == list(range(lines))  # none lost, in order
        kinds = [kind for kind, _ in seen]
        last_worker_line = max(
            i
            for i, (kind, batch) in enumerate(seen)
            if kind == "log" and any(line.stream == "worker" for line in batch)
        )
        # stdout in order up to its result (stderr is another pipe), the outcome last
        assert last_worker_line < kinds.index("result") < kinds.index("finished") == len(seen) - 1
    finally:
        manager.shutdown()


_IMPORTS = """
import sys
from PySide6.QtCore import QCoreApplication
app = QCoreApplication([])
from rocmpanel.jobs.runner import JobManager
JobManager()
late = ("rocmpanel.jobs.process", "rocmpanel.jobs.protocol", "rocmpanel.jobs.spec", "subprocess")
print(",".join(name for name in late if name in sys.modules))
"""


def test_a_job_manager_imports_the_process_side_only_for_its_first_job() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
