"""The Qt side of jobs: typed check events reach the GUI thread as ``check_done``."""

from __future__ import annotations

from pathlib import Path

from rocmpanel.base.enums import CheckStatus
from rocmpanel.jobs.protocol import CheckDone
from rocmpanel.jobs.runner import JobManager
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
