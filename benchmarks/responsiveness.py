"""GUI-thread stalls of the real main window under four loads at once.

The main window (offscreen) shows the Monitor tab while, all at the same time:

- ``gpus``: 8 replayed GPUs (a /sys and /proc tree whose values a separate process
  rewrites at 4 Hz, see _replay_gpus.py) are sampled at 2 Hz and graphed;
- ``chat``: the Chat tab streams from a tiny LLaMA (tests/tiny_llama.py) on the CPU at
  full speed: the message is sent as a user sends it, each finished reply regenerated;
- ``log``: a job prints 20,000 log lines a second (_log_flood.py, through the JobManager)
  and its log is open, as after a click on its chip in the jobs strip;
- ``env``: every 5 s the Setup tab's environment editor applies two variables (HOME and
  ROCMPANEL_HOME are temp folders: the user's own files are never touched).

A 1 ms precise QTimer measures the GUI thread: each tick's lateness (time since the last
tick, less 1 ms) over ``--seconds`` (30 by default) after a warm-up. Prints each load's
own figure, so a reader sees it ran, the panel's CPU use, how long the GUI thread waited
for a CPU core (on a busy machine that, not the panel, is much of a stall), the worst
stalls with what happened near them (env applies, finished replies, garbage collections),
the goals (p99 <= 16 ms, max <= 50 ms) and, as the last line, ``stall p99 X ms max Y ms``.
Always exits 0; a missed goal is printed as such. ``--skip chat,log`` leaves loads out,
to find which one a stall comes from.

    python benchmarks/responsiveness.py [--seconds 30] [--skip LOADS] [--worker-threads 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for folder in (ROOT, HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from _loads import (  # noqa: E402
    ChatLoad,
    EnvApplyLoad,
    Events,
    GcWatch,
    LogFloodLoad,
    MonitorLoad,
    attempt,
    build_tiny_model,
    env_editor,
    optional,
    pump,
    run_queue_wait_s,
    start_replay,
    stop_replay,
)

GOAL_P99_MS = 16.0
GOAL_MAX_MS = 50.0
TIMER_MS = 1
WARM_UP_MS = 3000
WORST_SHOWN = 5
LOADS = ("gpus", "chat", "log", "env")


class StallMeter(QObject):
    """A 1 ms precise timer on the GUI thread; records how late each tick came."""

    def __init__(self) -> None:
        super().__init__()
        self.lateness_ms: list[float] = []
        self.at_s: list[float] = []  # when each tick came, since start
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(TIMER_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._started = self._last = time.perf_counter()

    def start(self) -> None:
        self._started = self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        """Stop; the seconds measured."""
        self._timer.stop()
        return time.perf_counter() - self._started

    def since_start(self) -> float:
        return time.perf_counter() - self._started

    def _on_timer_timeout(self) -> None:
        now = time.perf_counter()
        self.lateness_ms.append(max(0.0, (now - self._last) * 1000.0 - TIMER_MS))
        self.at_s.append(now - self._started)
        self._last = now


def percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of an ascending list, nearest rank."""
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def isolate(base: Path, worker_threads: int) -> Path:
    """Point every per-user location at temp folders; returns the fake HOME."""
    home = base / "home"
    home.mkdir()
    os.environ["HOME"] = str(home)
    os.environ["ROCMPANEL_HOME"] = str(base / "rocmpanel-home")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        os.environ[name] = str(home / name.lower())
    os.environ["HF_HUB_OFFLINE"] = "1"
    # The chat worker inherits these. On the machines this panel is for, the model runs on
    # the GPU; here it runs on the CPU, and must leave a core to the panel as a GPU would.
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(worker_threads)
    return home


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--cards", type=int, default=8)
    parser.add_argument("--log-rate", type=int, default=20_000)
    parser.add_argument("--worker-threads", type=int, default=1, help="torch threads of chat")
    parser.add_argument("--skip", default="", help=f"loads to leave out, of {','.join(LOADS)}")
    args = parser.parse_args()
    args.skip = {name for name in args.skip.split(",") if name}
    if args.skip - set(LOADS):
        parser.error(f"--skip takes {','.join(LOADS)}")
    with tempfile.TemporaryDirectory(prefix="rocmpanel-responsiveness-") as temp:
        base = Path(temp)
        home = isolate(base, args.worker_threads)
        budget_s = args.seconds + 600  # every child ends itself if this run dies
        replay = None if "gpus" in args.skip else start_replay(base, args.cards, budget_s)
        try:
            return run(args, base, home, budget_s, replay)
        finally:
            if replay is not None and replay.poll() is None:
                replay.kill()
                replay.wait()


def run(
    args: argparse.Namespace,
    base: Path,
    home: Path,
    budget_s: float,
    replay: subprocess.Popen[str] | None,
) -> int:
    from rocmpanel.base.settings import Settings
    from rocmpanel.shell.main_window import MainWindow

    load_before = os.getloadavg()[0]
    model = None if "chat" in args.skip else build_tiny_model(base)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = Settings.load()
    settings.monitor.interval_ms = 500  # 2 Hz
    if model is not None and not attempt("chat", lambda: ChatLoad.configure(settings, model)):
        model = None
    window = MainWindow(settings)
    window.resize(1280, 900)
    window.log_dock.show()
    meter = StallMeter()
    events = Events(meter.since_start)
    gc_watch = GcWatch(events)
    monitor = None
    if replay is not None:
        monitor = optional("GPU", lambda: MonitorLoad(window, args.cards))
    window.show()
    pump(500)
    chat = None
    if model is not None:
        chat = optional("chat", lambda: ChatLoad(window, model, events))
    if chat is not None and not optional("chat", chat.load):
        chat = None
    editor = None if "env" in args.skip else optional("env apply", lambda: env_editor(window))
    env = EnvApplyLoad(editor, home, events) if editor is not None else None
    if monitor is not None:
        monitor.wait_ready()
    flood = None
    if "log" not in args.skip:
        flood = optional("log", lambda: LogFloodLoad(window, args.log_rate, budget_s))
    if chat is not None and not attempt("chat", chat.start):
        chat = None
    if env is not None:
        env.start()
    pump(WARM_UP_MS)  # every load running, the first batches drawn

    for counted in (monitor, flood, chat):
        if counted is not None:
            counted.begin()
    events.recording = True
    cpu_before, gui_cpu_before = time.process_time(), time.thread_time()
    waited_before = run_queue_wait_s()
    meter.start()
    pump(round(args.seconds * 1000))
    seconds = meter.stop()
    cpu = time.process_time() - cpu_before
    gui_cpu = time.thread_time() - gui_cpu_before
    waited_after = run_queue_wait_s()
    events.recording = False
    gc_watch.close()
    for stoppable in (env, chat):
        if stoppable is not None:
            stoppable.stop()

    print(
        f"machine: {os.cpu_count()} cores, load average {load_before:.2f} before the run; "
        f"the chat worker has {args.worker_threads} torch thread(s)"
    )
    print(f"measured {seconds:.1f} s of the GUI thread under load")
    print(monitor.report(seconds) if monitor is not None else "GPUs: not run")
    print(chat.report(seconds) if chat is not None else "chat: not run")
    print(flood.report(seconds) if flood is not None else "log job: not run")
    print(env.report() if env is not None else "env apply: not run")
    print(
        f"panel process CPU: {100 * cpu / seconds:.0f} % of a core (all threads), "
        f"GUI thread {100 * gui_cpu / seconds:.0f} %"
    )
    if waited_before is not None and waited_after is not None:
        # Time the system gave to other processes: a stall from the machine, not the panel.
        print(f"GUI thread waited {waited_after - waited_before:.2f} s for a free CPU core")
    window.close()
    app.processEvents()
    if replay is not None:
        print(stop_replay(replay))
    summarise(meter, events, seconds)
    return 0


def summarise(meter: StallMeter, events: Events, seconds: float) -> None:
    """The worst stalls, the percentiles and the goals; the last line is the summary."""
    late = meter.lateness_ms
    ordered = sorted(late)
    p50, p99 = percentile(ordered, 0.50), percentile(ordered, 0.99)
    worst = ordered[-1] if ordered else float("nan")
    print(f"timer ticks: {len(late)} ({len(late) / seconds:.0f}/s of the 1000/s asked)")
    for index in sorted(range(len(late)), key=late.__getitem__)[-WORST_SHOWN:][::-1]:
        at = meter.at_s[index]
        print(f"  stall {late[index]:6.1f} ms at {at:5.1f} s: {events.near(at, late[index])}")
    print(f"stall p50 {p50:.1f} ms")
    if p99 > GOAL_P99_MS:
        print(f"goal missed: p99 {p99:.1f} ms > {GOAL_P99_MS:.0f} ms")
    if worst > GOAL_MAX_MS:
        print(f"goal missed: max {worst:.1f} ms > {GOAL_MAX_MS:.0f} ms")
    print(f"goal: p99 <= {GOAL_P99_MS:.0f} ms, max <= {GOAL_MAX_MS:.0f} ms")
    print(f"stall p99 {p99:.1f} ms max {worst:.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
