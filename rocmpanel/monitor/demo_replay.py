"""The demo's past: the samples the replayed timeline gave over the last minutes.

In demo mode the Monitor shows minutes of history as soon as it opens. Each past step is
written into a private copy of the demo tree (``rocmpanel.machine.demo``) with the time set
to that step, and read back by the real :class:`~rocmpanel.monitor.sysfs_source.SysfsSource`,
so the history holds exactly what live sampling would have recorded. Blocking (a few hundred
small file writes and reads): the Monitor calls it off the GUI thread.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from rocmpanel.machine import demo
from rocmpanel.monitor import ranges
from rocmpanel.monitor.sample import Sample
from rocmpanel.monitor.sysfs_source import SysfsSource, discover_gpus

HISTORY_MINUTES = 10.0
STEP_S = 2.0


def past_samples(
    now: float,
    minutes: float = HISTORY_MINUTES,
    step_s: float = STEP_S,
    recording: demo.Recording | None = None,
) -> list[Sample]:
    """The samples of the ``minutes`` before ``now`` (exclusive), one every ``step_s``,
    oldest first. No host figures (the demo replays GPUs only) and no processes."""
    recording = recording or demo.load_recording()
    steps = int(minutes * 60.0 / step_s)
    times = [now - (steps - k) * step_s for k in range(steps)]
    folder = Path(tempfile.mkdtemp(prefix="rocmpanel-demo-past-"))
    try:
        demo.build_tree(folder, recording, times[0] if times else now)
        source = SysfsSource(discover_gpus(folder))
        samples = []
        written: dict[Path, str] = {}
        for t in times:
            demo.write_state(folder, recording, t, atomic=False, cache=written)
            samples.append(Sample(t, ranges.check_gpus(source.read()), None))
        source.close()
        return samples
    finally:
        shutil.rmtree(folder, ignore_errors=True)
