"""The loads of benchmarks/responsiveness.py, each driving the real main window as a user
would, and each counting what it did so that the benchmark can show it really ran.

They touch the window only through what a user sees (tabs by title, buttons, combo boxes,
the jobs strip) and the jobs API; the few attribute names they need are here, in one
place, to adapt when a view changes.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer
from PySide6.QtWidgets import QGraphicsView

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ENV_APPLY_EVERY_MS = 5000
CHAT_MAX_NEW_TOKENS = 512
REPLAY_HZ = 4.0


def pump(ms: int) -> None:
    """Run the event loop for ``ms`` milliseconds."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(condition: Callable[[], object], timeout_s: float, what: str) -> bool:
    """Run the event loop until ``condition()`` holds; False (and a note) on timeout."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            print(f"note: gave up waiting {timeout_s:.0f} s for {what}")
            return False
        pump(50)
    return True


class Events:
    """What the loads did and when (seconds on ``clock``), to say what a stall was near."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.items: list[tuple[float, str]] = []
        self.recording = False

    def add(self, label: str) -> None:
        if self.recording:
            self.items.append((self.clock(), label))

    def near(self, at_s: float, stall_ms: float) -> str:
        """What happened from 250 ms before the stall began to its end (a slot queued by an
        event, such as a refresh after an apply, may run a little after it)."""
        began = at_s - stall_ms / 1000.0
        found = [
            f"{label} ({(t - began) * 1000:+.0f} ms)"
            for t, label in self.items
            if began - 0.25 <= t <= at_s + 0.005
        ]
        return ", ".join(found[-4:]) or "nothing recorded"


class GcWatch:
    """Adds each garbage collection that took ``min_ms`` or more to ``events`` (from
    whichever thread ran it: a long one stops the GUI thread too, by the GIL)."""

    def __init__(self, events: Events, min_ms: float = 2.0) -> None:
        self.events = events
        self.min_ms = min_ms
        self._started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        took = (time.perf_counter() - self._started) * 1000.0
        if took >= self.min_ms:
            self.events.add(f"gc of generation {info.get('generation')} ({took:.0f} ms)")

    def close(self) -> None:
        gc.callbacks.remove(self._on_gc)


class PaintCounter(QObject):
    """Counts paint events of the widgets it is installed on (the Monitor's plots)."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def run_queue_wait_s() -> float | None:
    """Seconds this thread has waited for a CPU while runnable (Linux schedstat)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def start_replay(root: Path, cards: int, seconds: float) -> subprocess.Popen[str]:
    """Build the replayed GPUs' trees, point the Monitor at them, start rewriting them."""
    sys.path.insert(0, str(HERE))
    from _replay_gpus import build_trees

    sysfs, proc = build_trees(root, cards)
    os.environ["ROCMPANEL_SYSFS_ROOT"] = str(sysfs)
    os.environ["ROCMPANEL_PROC_ROOT"] = str(proc)
    argv = [sys.executable, str(HERE / "_replay_gpus.py"), str(root), "--cards", str(cards)]
    argv += ["--hz", str(REPLAY_HZ), "--seconds", str(seconds)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)


def stop_replay(replay: subprocess.Popen[str]) -> str:
    replay.terminate()
    rewrites = replay.communicate(timeout=10)[0].strip()
    return f"replay: the GPU values were rewritten {rewrites} times ({REPLAY_HZ:.0f} Hz)"


class MonitorLoad:
    """The Monitor tab, shown: counts samples received and plot repaints."""

    def __init__(self, window: Any, cards: int) -> None:
        self.cards = cards
        self.tab = window.tab("Monitor")
        self.samples = 0
        self.counter = PaintCounter()
        self.views: list[QGraphicsView] = []
        self._sampler_found = False
        if self.tab is None:
            print("note: the Monitor tab did not build in this tree: no GPU load")
            return
        window.tabs.setCurrentIndex(window.tab_titles().index("Monitor"))
        signal = getattr(getattr(self.tab, "sampler", None), "sample_ready", None)
        if signal is not None:
            signal.connect(self._on_sample)
            self._sampler_found = True

    def _on_sample(self, _sample: object) -> None:
        self.samples += 1

    def plot_views(self) -> list[QGraphicsView]:
        return self.tab.findChildren(QGraphicsView) if self.tab is not None else []

    def wait_ready(self) -> None:
        if self.tab is None:
            return
        # One plot area per GPU plus the host strip; they may be built after first paint.
        wait_until(lambda: len(self.plot_views()) > self.cards, 30, "the Monitor's plots")
        for view in self.plot_views():
            view.viewport().installEventFilter(self.counter)
            self.views.append(view)

    def begin(self) -> None:
        self.samples = 0
        self.counter.paints = 0

    def report(self, seconds: float) -> str:
        if self.tab is None:
            return "GPUs: not run (no Monitor tab)"
        gpus = len(getattr(self.tab, "panels", {})) or "?"
        samples = f"{self.samples} samples ({self.samples / seconds:.1f}/s)"
        if not self._sampler_found:
            samples = "samples: n/a (no sampler found)"
        return (
            f"GPUs: {gpus} graphed, {samples}, {self.counter.paints} plot repaints "
            f"({self.counter.paints / seconds:.1f}/s) in {len(self.views)} plot views"
        )


class LogFloodLoad:
    """A job writing ``rate`` log lines a second, with its log open (a click on its chip)."""

    def __init__(self, window: Any, rate: int, seconds: float) -> None:
        from rocmpanel.jobs.spec import JobSpec

        self.lines = 0
        self.batches = 0
        spec = JobSpec(
            "log flood",
            HERE / "_log_flood.py",
            args=("--rate", str(rate), "--seconds", str(seconds)),
        )
        self.job = window.jobs.start(spec)
        self.job.log_added.connect(self._on_log_added)
        self.dialog = window.jobs_strip.show_log(self.job)

    def _on_log_added(self, lines: list[object]) -> None:
        self.lines += len(lines)
        self.batches += 1

    def begin(self) -> None:
        self.lines = self.batches = 0

    def report(self, seconds: float) -> str:
        state = "running" if self.job.running else f"ended: {self.job.outcome}"
        return (
            f"log job: {self.lines} lines received ({self.lines / seconds:.0f}/s) "
            f"in {self.batches} batches; job {state}"
        )


def build_tiny_model(base: Path) -> Path | None:
    """The tests' tiny LLaMA, built in a child process (the panel never imports torch)."""
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"note: {' and '.join(missing)} missing: the chat load is skipped")
        return None
    folder = base / "tiny-llama"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "tiny_llama.py"), str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"note: the tiny model could not be built: the chat load is skipped\n{done.stderr}")
        return None
    return folder


class ChatLoad:
    """The Chat tab driven as a user drives it: load, send, regenerate each reply."""

    def __init__(self, window: Any, model: Path, events: Events) -> None:
        self.model = model
        self.events = events
        self.tab = window.tab("Chat")
        self.tokens = 0
        self.replies = 0
        self.job: Any = None
        window.jobs.job_added.connect(self._on_job_added)
        self._poll = QTimer()
        self._poll.setInterval(50)
        self._poll.timeout.connect(self._on_poll)

    def _on_job_added(self, job: Any) -> None:
        if job.spec.interactive and self.job is None:
            self.job = job
            job.tokens_received.connect(self._on_tokens)

    def _on_tokens(self, tokens: list[Any]) -> None:
        self.tokens += sum(getattr(t, "count", None) or 1 for t in tokens)

    @staticmethod
    def configure(settings: Any, model: Path) -> None:
        """Before the window is built: the model, fp32 on the CPU, sampling at temperature
        1 and up to CHAT_MAX_NEW_TOKENS a reply, as a user who chose them last time."""
        from rocmpanel.base.enums import Device, Precision

        chat = settings.chat
        chat.last_model = str(model)
        chat.precision = Precision.FP32
        chat.device = Device.CPU
        chat.temperature = 1.0
        chat.max_new_tokens = CHAT_MAX_NEW_TOKENS

    def load(self) -> bool:
        """Press Load once the folder's check allows it; True once the model is loaded."""
        if self.tab is None:
            print("note: the Chat tab did not build in this tree: no chat load")
            return False
        panel = self.tab.model_panel
        if not wait_until(panel.load_button.isEnabled, 60, "the model check"):
            return False
        panel.load_button.click()
        banner = getattr(self.tab, "banner", None)  # where the tab says the worker failed
        failed = banner.isVisible if banner is not None else lambda: False
        wait_until(lambda: panel.unload_button.isEnabled() or failed(), 300, "the model to load")
        if failed():
            label = getattr(banner, "label", None)
            print(f"note: the chat model did not load: {label.text() if label else '?'}")
        return bool(panel.unload_button.isEnabled())

    def start(self) -> None:
        self.tab.input.setPlainText("Tell me a long story about GPUs and their fans.")
        self.tab.send_button.click()
        self._poll.start()

    def _on_poll(self) -> None:
        tab = self.tab
        if not tab.stop_button.isEnabled() and tab.regenerate_button.isEnabled():
            self.replies += 1
            self.events.add("chat reply ended")
            tab.regenerate_button.click()

    def begin(self) -> None:
        self.tokens = self.replies = 0

    def stop(self) -> None:
        self._poll.stop()

    def report(self, seconds: float) -> str:
        return (
            f"chat: {self.tokens} tokens streamed ({self.tokens / seconds:.0f} tokens/s), "
            f"{self.replies} replies finished"
        )


def attempt(what: str, step: Callable[[], object]) -> bool:
    """Run ``step``; False with a note when it fails. The views change under this
    benchmark during a restructure, and one load that cannot be driven must not stop the
    others from being measured."""
    try:
        step()
    except Exception as exc:
        print(f"note: the {what} load could not be set up, so it is left out: {exc!r}")
        return False
    return True


def optional(what: str, build: Callable[[], Any]) -> Any:
    """What ``build()`` returns, or None (with a note) when it fails; see :func:`attempt`."""
    built: list[Any] = []
    return built[0] if attempt(what, lambda: built.append(build())) else None


def env_editor(window: Any) -> Any:
    """The Setup tab's environment editor, or None when this tree has none."""
    editor = getattr(window.tab("Setup"), "env_editor", None)
    if editor is None:
        print("note: no environment editor on the Setup tab: the env apply load is skipped")
    return editor


class EnvApplyLoad:
    """The Setup tab's environment editor applying two variables every few seconds."""

    VARIABLES = (("HSA_OVERRIDE_GFX_VERSION", ("11.0.0", "10.3.0")), ("AMD_LOG_LEVEL", ("1", "0")))

    def __init__(self, editor: Any, home: Path, events: Events) -> None:
        self.home = home
        self.events = events
        self.editor = editor
        self.applies = 0
        self.failures = 0
        self.durations_ms: list[float] = []
        self.last_value = ""
        self._timer = QTimer()
        self._timer.setInterval(ENV_APPLY_EVERY_MS)
        self._timer.timeout.connect(self.apply_once)

    def apply_once(self) -> None:
        turn = self.applies + self.failures
        started = time.perf_counter()
        for name, values in self.VARIABLES:
            self.editor.propose(name, values[turn % 2])
        ok = self.editor.apply()
        self.durations_ms.append((time.perf_counter() - started) * 1000.0)
        self.events.add("env apply")
        if ok is False:
            self.failures += 1
        else:
            self.applies += 1
            self.last_value = self.VARIABLES[0][1][turn % 2]

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def report(self) -> str:
        # An apply may finish in the background: the file is the proof that it landed.
        profile = self.home / ".profile"
        written = profile.read_text(encoding="utf-8") if profile.exists() else ""
        landed = bool(self.last_value) and f'"{self.last_value}"' in written
        longest = max(self.durations_ms, default=0.0)
        return (
            f"env apply: {self.applies} applied, {self.failures} failed, longest call "
            f"{longest:.1f} ms on the GUI thread; last value in ~/.profile: "
            f"{'yes' if landed else 'no'}"
        )
