"""The chat worker for real: a child process with CPU torch and a tiny LLaMA built here."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.chat.protocol import GenerateRequest, LoadedModel, LoadRequest, Sampling
from rocmpanel.jobs.process import JobOutcome, JobProcess
from rocmpanel.jobs.protocol import ReplyDone, Result, Token, WorkerError
from rocmpanel.jobs.spec import JobSpec, prepare

pytestmark = [pytest.mark.torch, pytest.mark.slow]
WAIT_S = 120.0


class Worker:
    """A chat worker process and what it said, in order."""

    def __init__(self, env: dict[str, str | None] | None = None) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self.tokens: list[tuple[float, Token]] = []
        spec = JobSpec("chat", "chat", interactive=True, env=env or {})
        self.process = JobProcess(prepare(spec), self._on_event, self.events.put, grace_s=2.0)
        self.process.start()

    def _on_event(self, event: Any) -> None:
        if isinstance(event, Token):
            self.tokens.append((time.monotonic(), event))
        if isinstance(event, (Result, ReplyDone, WorkerError, Token)):
            self.events.put(event)

    def answer(self, timeout: float = WAIT_S) -> Result | ReplyDone | WorkerError | JobOutcome:
        """The next result, reply or error (tokens are skipped), or the exit outcome."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
            if not isinstance(event, Token):
                return event

    def first_token(self, timeout: float = WAIT_S) -> Token:
        deadline = time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
            if isinstance(event, Token):
                return event
            raise AssertionError(f"expected a token, got {event}")

    def load(self, path: Path, precision: Precision, **extra: Any) -> Result | WorkerError:
        request = LoadRequest(str(path), precision, Device.CPU, 4096, **extra)
        self.process.send(request.op, **request.fields())
        answer = self.answer()
        assert isinstance(answer, (Result, WorkerError)), answer
        return answer

    def generate(self, request_id: int, max_new: int, **sampling: Any) -> None:
        request = GenerateRequest(
            request_id,
            (("user", "Hello, how are you?"),),
            "Answer briefly.",
            Sampling.declared(max_new_tokens=max_new, **sampling),
        )
        self.process.send(request.op, **request.fields())


@pytest.fixture(scope="module")
def worker(tiny_model: Path):
    session = Worker()
    yield session
    if session.process.running:
        session.process.send("exit")
        if session.process.wait(15) is None:
            session.process.cancel()


def refused(answer: Any, worker: Worker, kind: str) -> WorkerError:
    """``answer`` is a load error of ``kind``, and the worker then exits with code 3 (a
    failed load ends it: the job fails with that error)."""
    assert isinstance(answer, WorkerError) and answer.kind == kind, answer
    assert answer.data["op"] == "load"
    outcome = worker.answer()
    assert isinstance(outcome, JobOutcome), outcome
    assert outcome.exit_code == 3 and outcome.error == answer
    assert outcome.state.value == "failed"
    return answer


def test_refuses_a_folder_without_weights(tiny_llama: ModuleType, tmp_path: Path) -> None:
    worker = Worker()
    answer = worker.load(tiny_llama.without_weights(tmp_path), Precision.FP32)
    assert "safetensors" in refused(answer, worker, "no_weights").message


def test_refuses_a_model_that_needs_remote_code(
    tiny_llama: ModuleType, tiny_model: Path, tmp_path: Path
) -> None:
    worker = Worker()
    folder = tiny_llama.needing_remote_code(tiny_model, tmp_path)
    refused(worker.load(folder, Precision.FP32), worker, "remote_code")  # its code never ran


def test_fp32_load_and_streamed_greedy_reply(worker: Worker, tiny_model: Path) -> None:
    answer = worker.load(tiny_model, Precision.FP32)
    assert isinstance(answer, Result), answer
    loaded = answer.data
    assert loaded["kind"] == "loaded" and loaded["device"] == "cpu"
    assert loaded["precision"] == "fp32" and loaded["context_length"] == 4096
    assert loaded["parameters"] > 50_000
    assert "bdf" in loaded and loaded["bdf"] is None  # a PCI slot only for a GPU
    assert loaded["preset"] is None and loaded["preset_settings"] == []  # no preset header
    worker.tokens.clear()
    worker.generate(1, 12, temperature=0.0)
    reply = worker.answer()
    assert isinstance(reply, ReplyDone), reply  # a typed reply event, not a result
    data = reply.data
    assert reply.request_id == 1
    streamed = "".join(t.text for _, t in worker.tokens)
    assert streamed == reply.text and streamed
    assert all(t.request_id == 1 for _, t in worker.tokens)
    assert sum(t.count or 0 for _, t in worker.tokens) >= 1
    assert 1 <= data["new_tokens"] <= 12 and data["prompt_tokens"] > 5
    assert data["ttft_s"] > 0 and data["peak_memory_bytes"] > 10 * 1024**2
    assert data["memory_kind"] == "rss" and data["stopped"] is False
    # Greedy decoding is deterministic: the same request gives the same reply.
    worker.generate(2, 12, temperature=0.0)
    again = worker.answer()
    assert isinstance(again, ReplyDone) and again.request_id == 2
    assert again.text == reply.text


def test_a_load_under_a_preset_applies_and_reports_it(tiny_model: Path) -> None:
    header = {"id": "one-thread", "name": "One thread", "torch": {"cpu_threads": 1}}
    worker = Worker({"ROCMPANEL_PRESET": json.dumps(header)})
    try:
        answer = worker.load(tiny_model, Precision.FP32)
        assert isinstance(answer, Result), answer
        loaded = answer.data
        # The preset's threads win over the worker's "leave a core free" default.
        assert loaded["threads"] == 1
        assert loaded["preset"] == {"id": "one-thread", "name": "One thread"}
        assert loaded["preset_settings"] == [
            {"key": "cpu_threads", "value": 1, "applied": True, "note": "torch.set_num_threads(1)"}
        ]
        requested = LoadRequest(str(tiny_model), Precision.FP32, Device.CPU, 4096)
        assert LoadedModel.from_result(loaded, requested).preset == "One thread"
    finally:
        worker.process.cancel()


def test_stop_ends_a_long_reply_early(worker: Worker) -> None:
    worker.generate(3, 3000, temperature=1.0, seed=7)
    worker.first_token()
    worker.process.send("stop")
    reply = worker.answer()
    assert isinstance(reply, ReplyDone), reply
    assert reply.request_id == 3
    assert reply.data["stopped"] is True and reply.data["finish"] == "stop"
    assert 1 <= reply.data["new_tokens"] < 3000


def test_nf4_load_on_cpu_and_reply(worker: Worker, tiny_model: Path) -> None:
    fp32 = worker.load(tiny_model, Precision.FP32)
    assert isinstance(fp32, Result), fp32
    answer = worker.load(tiny_model, Precision.NF4)
    assert isinstance(answer, Result), answer
    assert answer.data["precision"] == "nf4" and answer.data["compute_dtype"] == "bfloat16"
    # 4-bit weights are packed two per byte; the reported count is unpacked.
    assert answer.data["parameters"] == fp32.data["parameters"]
    assert answer.data["footprint_bytes"] < fp32.data["footprint_bytes"]
    worker.generate(4, 8, temperature=0.7, seed=1)
    reply = worker.answer()
    assert isinstance(reply, ReplyDone), reply
    assert reply.data["precision"] == "nf4" and reply.data["new_tokens"] >= 1


def test_a_tokenizer_without_chat_template_gets_the_fallback(
    worker: Worker, tiny_model: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "no-template"
    shutil.copytree(tiny_model, folder)
    (folder / "chat_template.jinja").unlink()
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    assert isinstance(worker.load(folder, Precision.FP32), Result)
    worker.generate(6, 4, temperature=0.0)
    reply = worker.answer()
    assert isinstance(reply, ReplyDone) and reply.data["new_tokens"] >= 1


def test_a_short_context_drops_the_oldest_messages(worker: Worker, tiny_model: Path) -> None:
    request = LoadRequest(str(tiny_model), Precision.FP32, Device.CPU, 48)
    worker.process.send(request.op, **request.fields())
    loaded = worker.answer()
    assert isinstance(loaded, Result) and loaded.data["context_length"] == 48
    history = (("user", "The quick brown fox jumps over the lazy dog."), ("assistant", "Yes."))
    sampling = Sampling.declared(max_new_tokens=8)
    fits = GenerateRequest(7, (*history, ("user", "Hello")), "", sampling)
    worker.process.send(fits.op, **fits.fields())
    reply = worker.answer()
    assert isinstance(reply, ReplyDone), reply
    assert reply.data["prompt_tokens"] <= 48 - 8
    too_long = GenerateRequest(8, (("user", "word " * 100),), "", sampling)
    worker.process.send(too_long.op, **too_long.fields())
    error = worker.answer()
    assert isinstance(error, WorkerError) and error.kind == "context"
    assert "fit in the context" in error.message
    assert error.data["op"] == "generate" and error.data["id"] == 8


def test_a_command_without_sampling_values_is_greedy_and_bounded(
    worker: Worker, tiny_model: Path
) -> None:
    # The panel always sends every value; a hand-written command gets the worker's safety
    # fallback (greedy, no penalty, a bounded reply), never sampling defaults of its own.
    assert isinstance(worker.load(tiny_model, Precision.FP32), Result)
    message = [{"role": "user", "content": "Hello"}]
    texts = []
    for request_id in (11, 12):
        worker.process.send("generate", id=request_id, messages=message)
        reply = worker.answer()
        assert isinstance(reply, ReplyDone) and reply.request_id == request_id, reply
        assert 1 <= reply.data["new_tokens"] <= 256
        texts.append(reply.text)
    assert texts[0] == texts[1]


def test_a_gpu_load_without_a_gpu_is_refused(tiny_model: Path) -> None:
    request = LoadRequest(str(tiny_model), Precision.FP32, Device.GPU, 64).fields()
    for device, kind in (("gpu", "no_gpu"), ("cuda", "no_gpu"), ("tpu", "bad_command")):
        # "cuda": what panels before the Device enum sent
        worker = Worker()
        worker.process.send("load", **{**request, "device": device})
        refused(worker.answer(), worker, kind)


def test_unload_then_generate_is_a_clear_error(worker: Worker) -> None:
    worker.process.send("unload")
    answer = worker.answer()
    assert isinstance(answer, Result) and answer.data == {"kind": "unloaded", "had_model": True}
    worker.generate(5, 4)
    error = worker.answer()
    assert isinstance(error, WorkerError) and error.kind == "no_model"
    worker.process.send("bogus")
    assert isinstance(worker.answer(), WorkerError)
    worker.process.send("exit")
    outcome = worker.process.wait(30)
    assert outcome is not None and outcome.exit_code == 0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_killed_worker_is_reported_and_a_new_one_works(tiny_model: Path) -> None:
    session = Worker()
    try:
        assert isinstance(session.load(tiny_model, Precision.FP32), Result)
        session.generate(1, 3000, temperature=1.0)
        session.first_token()
        assert session.process.pid is not None
        os.kill(session.process.pid, signal.SIGKILL)
        outcome = session.answer()
        assert isinstance(outcome, JobOutcome)
        assert outcome.exit_code == -signal.SIGKILL
        assert outcome.signal_name == "SIGKILL"
    finally:
        if session.process.running:
            session.process.cancel()
