"""Chat overhead: the panel's worker protocol against a plain in-process ``model.generate``.

In one run, the same model (a small LLaMA built from a config with random weights, or
``--model DIR``), the same prompt and greedy decoding: tokens/s and time to first token
(TTFT) measured in this process with a timestamp-only streamer, and through the chat
worker (a child process, JSON lines over pipes) as the panel sees it: TTFT from sending
``generate`` to the first token event, tokens/s from the first to the last token event.
Runs alternate between the two; medians are printed, and as the last line the median of
the paired ratios worker/raw tokens/s (each worker run against the raw run just before it,
so drifts in the machine's load cancel). Goals: ratio >= 0.97, TTFT overhead <= 30 ms.

    python benchmarks/chat.py [--runs 9] [--tokens 128] [--precision fp32] [--device cpu]
"""

from __future__ import annotations

import argparse
import importlib.util
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKERS = ROOT / "rocmpanel" / "workers"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# The workers' private siblings import each other by name, as they do when run by path.
if str(WORKERS) not in sys.path:
    sys.path.insert(0, str(WORKERS))

import _chat_load  # noqa: E402

from rocmpanel.base.enums import Device, Precision  # noqa: E402
from rocmpanel.chat.protocol import GenerateRequest, LoadRequest, Sampling  # noqa: E402
from rocmpanel.jobs.process import JobProcess  # noqa: E402
from rocmpanel.jobs.protocol import ReplyDone, Result, Token, WorkerError  # noqa: E402
from rocmpanel.jobs.spec import JobSpec, prepare  # noqa: E402

MESSAGES = (("user", "Tell me how tokens stream into the chat window."),)
SYSTEM = "You are a helpful assistant."


def build_model(base: Path, hidden: int, layers: int) -> Path:
    path = ROOT / "tests" / "tiny_llama.py"
    spec = importlib.util.spec_from_file_location("tiny_llama", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.build_tiny_llama(base / "bench-llama", hidden_size=hidden, layers=layers))


class RawModel:
    """The same load and prompt as the worker, in this process."""

    def __init__(self, folder: Path, precision: str, device: str) -> None:
        import torch
        import transformers

        self.torch = torch
        cuda = Device.parse(device) is not Device.CPU and torch.cuda.is_available()
        self.device = "cuda" if cuda else "cpu"
        # The worker's own weight arguments (dtype, quantization, device map), so both
        # sides load exactly the same model.
        kwargs: dict[str, Any] = {"use_safetensors": True}
        kwargs.update(_chat_load.weight_kwargs(transformers, torch, precision, self.device))
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
        self.model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), **kwargs)
        self.model.eval()
        chat = [{"role": "system", "content": SYSTEM}]
        chat += [{"role": r, "content": c} for r, c in MESSAGES]
        encoded = self.tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_dict=True, return_tensors="pt"
        )
        self.inputs = {k: v.to(self.model.device) for k, v in encoded.items()}

    def run(self, tokens: int) -> tuple[float, float, int]:
        """(TTFT s, tokens/s after the first, new tokens) of one greedy generate."""
        from transformers.generation.streamers import BaseStreamer

        stamps: list[float] = []

        class Clock(BaseStreamer):
            prompt_seen = False

            def put(self, value: Any) -> None:
                if not self.prompt_seen:
                    self.prompt_seen = True
                    return
                stamps.append(time.perf_counter())

            def end(self) -> None:
                pass

        started = time.perf_counter()
        with self.torch.inference_mode():
            self.model.generate(
                **self.inputs,
                max_new_tokens=tokens,
                do_sample=False,
                repetition_penalty=1.0,
                streamer=Clock(),
                pad_token_id=self.tokenizer.pad_token_id,
            )
        return _figures(started, stamps, len(stamps))


def _figures(started: float, stamps: list[float], new_tokens: int) -> tuple[float, float, int]:
    ttft = stamps[0] - started
    span = stamps[-1] - stamps[0]
    speed = (new_tokens - 1) / span if new_tokens > 1 and span > 0 else float("nan")
    return ttft, speed, new_tokens


class WorkerModel:
    """The chat worker as the panel drives it."""

    def __init__(self, folder: Path, precision: str, device: str) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        spec = JobSpec("chat-bench", "chat", interactive=True)
        self.job = JobProcess(prepare(spec), self._on_event, self.events.put)
        self.job.start()
        load = LoadRequest(str(folder), Precision(precision), Device.parse(device), 4096)
        self.job.send(load.op, **load.fields())
        answer = self.events.get(timeout=600)
        if not isinstance(answer, Result):
            raise SystemExit(f"the worker could not load the model: {answer}")
        self.loaded = answer.data
        self.request = 0

    def _on_event(self, event: Any) -> None:
        if isinstance(event, Token):
            self.events.put((time.perf_counter(), event))
        elif isinstance(event, (Result, ReplyDone, WorkerError)):
            self.events.put(event)

    def run(self, tokens: int) -> tuple[float, float, int]:
        self.request += 1
        request = GenerateRequest(
            self.request,
            MESSAGES,
            SYSTEM,
            Sampling.declared(temperature=0.0, repetition_penalty=1.0, max_new_tokens=tokens),
        )
        stamps: list[float] = []
        started = time.perf_counter()
        self.job.send(request.op, **request.fields())
        while True:
            event = self.events.get(timeout=600)
            if isinstance(event, tuple):
                stamps.append(event[0])
            elif isinstance(event, ReplyDone) and event.request_id == self.request:
                return _figures(started, stamps, int(event.data["new_tokens"]))
            else:
                raise SystemExit(f"the worker failed: {event}")

    def close(self) -> None:
        self.job.send("exit")
        if self.job.wait(30) is None:
            self.job.cancel()


def add_model_args(parser: argparse.ArgumentParser) -> None:
    """The options that choose or build the model (shared with benchmarks/serve.py)."""
    parser.add_argument("--model", type=Path, default=None, help="model folder (default: build)")
    parser.add_argument("--hidden", type=int, default=256, help="hidden size of the built model")
    parser.add_argument("--layers", type=int, default=4, help="layers of the built model")
    parser.add_argument("--precision", default="fp32", choices=[p.value for p in Precision])
    parser.add_argument("--device", default="cpu", choices=("auto", "gpu", "cpu", "cuda"))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_model_args(parser)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.model or build_model(Path(tmp), args.hidden, args.layers)
        worker = WorkerModel(folder, args.precision, args.device)
        raw = RawModel(folder, args.precision, args.device)
        if worker.loaded.get("threads"):
            # Same CPU threads on both sides: this measures the protocol, not threading.
            raw.torch.set_num_threads(int(worker.loaded["threads"]))
        try:
            raw.run(8)  # warm-up: first-call allocations and kernel selection
            worker.run(8)
            raw_runs, worker_runs = [], []
            for _ in range(args.runs):
                raw_runs.append(raw.run(args.tokens))
                worker_runs.append(worker.run(args.tokens))
        finally:
            worker.close()
    loaded = worker.loaded
    print(
        f"model {folder.name}: {loaded.get('parameters')} parameters, {args.precision} on "
        f"{loaded.get('device_name')} ({loaded.get('threads')} threads), {args.tokens} new "
        f"tokens, {args.runs} runs each"
    )
    for label, runs in (("raw model.generate", raw_runs), ("chat worker", worker_runs)):
        ttft = statistics.median(r[0] for r in runs) * 1000
        speed = statistics.median(r[1] for r in runs)
        print(f"{label:<20} {speed:8.1f} tok/s  TTFT {ttft:7.1f} ms  (medians)")
    # Each worker run is compared with the raw run just before it, so slow drifts in the
    # machine's load (other processes on a shared box) cancel out; the median of those
    # paired figures is the result.
    ratios = [w[1] / r[1] for r, w in zip(raw_runs, worker_runs, strict=True)]
    overheads = [(w[0] - r[0]) * 1000 for r, w in zip(raw_runs, worker_runs, strict=True)]
    print("paired ratios " + " ".join(f"{x:.2f}" for x in ratios))
    print(
        f"TTFT overhead {statistics.median(overheads):.1f} ms (median of pairs; goal <= 30 ms);"
        " goal: ratio >= 0.97"
    )
    print(f"ratio {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
