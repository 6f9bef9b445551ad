"""Serve overhead: one streaming HTTP client against a plain in-process ``model.generate``.

In one run, the same model (a small LLaMA built from a config with random weights, or
``--model DIR``), the same chat-templated prompt, greedy decoding and the same number of
new tokens: tokens/s and time to first token (TTFT) of ``model.generate`` in this process
(a timestamp-only streamer, as ``benchmarks/chat.py`` measures it), and through the
OpenAI-compatible server inside the chat worker (``serve`` on 127.0.0.1, a free port, a
random key): one streaming client on ``POST /v1/chat/completions``, TTFT from sending the
request to the first content chunk, tokens/s from the first to the last content chunk
with the token count from ``stream_options.include_usage``. Runs alternate and are paired
(each HTTP run against the raw run just before it, so drifts in the machine's load
cancel). Then rounds of 8 concurrent non-streaming clients: every reply must come back in
full (the same text as the single client's), and p50/p99 latency is printed. Goals:
tokens/s ratio >= 0.95, TTFT overhead <= 30 ms. The last line is ``ratio X``.

    python benchmarks/serve.py [--runs 9] [--rounds 3] [--tokens 512] [--model DIR]
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import math
import secrets
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import psutil

HERE = Path(__file__).resolve().parent


def _load_chat_bench() -> ModuleType:
    """benchmarks/chat.py by path: ``import chat`` could find the chat worker instead
    (chat.py puts rocmpanel/workers on sys.path)."""
    spec = importlib.util.spec_from_file_location("bench_chat", HERE / "chat.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_chat = _load_chat_bench()

from rocmpanel.chat.serve_protocol import ServeRequest  # noqa: E402
from rocmpanel.jobs.process import JobOutcome  # noqa: E402
from rocmpanel.jobs.protocol import Result, WorkerError  # noqa: E402

RATIO_GOAL = 0.95
TTFT_GOAL_MS = 30.0
CLIENTS = 8
CHAT_PATH = "/v1/chat/completions"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    bench_chat.add_model_args(parser)
    parser.add_argument(  # long runs: 128 tokens gave paired ratios from 0.8 to 1.3 here
        "--tokens", type=int, default=512, help="new tokens per request"
    )
    parser.add_argument("--runs", type=int, default=9, help="paired raw/HTTP runs")
    parser.add_argument("--rounds", type=int, default=3, help=f"rounds of {CLIENTS} clients")
    args = parser.parse_args(argv)
    for name in ("runs", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.tokens < 2:
        parser.error("--tokens must be at least 2 (tokens/s needs a first and a last token)")
    return args


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100), linear between the closest ranks (numpy's default
    'linear' method), so p99 of a few samples lies just under their maximum."""
    if not values:
        raise ValueError("no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def verdict(value: float, goal: float, *, at_least: bool) -> str:
    """``ok`` when ``value`` meets ``goal`` (``at_least``: >=, else <=), else ``MISSED``."""
    met = value >= goal if at_least else value <= goal
    return "ok" if met and math.isfinite(value) else "MISSED"


def chat_body(tokens: int, *, stream: bool) -> dict[str, Any]:
    """The request: the raw run's system and user messages, greedy, ``tokens`` new ones."""
    messages = [{"role": "system", "content": bench_chat.SYSTEM}]
    messages += [{"role": r, "content": c} for r, c in bench_chat.MESSAGES]
    body: dict[str, Any] = {
        "model": "bench",
        "messages": messages,
        "max_tokens": tokens,
        "temperature": 0,
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


@dataclass(frozen=True)
class StreamRun:
    """One streaming request as its client saw it."""

    ttft_s: float
    tokens_per_s: float
    completion_tokens: int
    prompt_tokens: int
    text: str
    finish_reason: str | None


def sse_payloads(lines: Iterable[bytes]) -> Iterator[tuple[float, dict[str, Any]]]:
    """The JSON payloads of server-sent ``data:`` lines up to ``[DONE]`` (bytes lines in);
    an ``error`` payload raises, as the server sends one when it stops a stream."""
    for line in lines:
        if not line.startswith(b"data:"):
            continue  # blank separators, comments, other fields
        data = line[5:].strip()
        if data == b"[DONE]":
            return
        payload = json.loads(data)
        if "error" in payload:
            raise RuntimeError(f"the stream ended with an error: {payload['error']}")
        yield time.perf_counter(), payload


class Client:
    """A lean HTTP client (http.client, one connection per request) so that what is
    measured is the server, not the client."""

    def __init__(self, url: str, key: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def _post(self, body: dict[str, Any]) -> tuple[http.client.HTTPConnection, Any, float]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
        started = time.perf_counter()
        # Headers and body go in two sends; http.client sets TCP_NODELAY when it connects
        # (HTTPConnection.connect, CPython 3.11), so Nagle cannot hold the body back.
        conn.request("POST", CHAT_PATH, json.dumps(body).encode(), self.headers)
        response = conn.getresponse()
        if response.status != 200:
            detail = response.read().decode(errors="replace")
            response.close()
            conn.close()
            raise RuntimeError(f"HTTP {response.status} from {CHAT_PATH}: {detail}")
        return conn, response, started

    def stream(self, tokens: int) -> StreamRun:
        conn, response, started = self._post(chat_body(tokens, stream=True))
        stamps: list[float] = []
        pieces: list[str] = []
        usage: dict[str, Any] = {}
        finish = None
        try:
            for at, payload in sse_payloads(iter(response.readline, b"")):
                if payload.get("usage"):
                    usage = payload["usage"]
                for choice in payload.get("choices") or ():
                    content = (choice.get("delta") or {}).get("content")
                    if content:
                        stamps.append(at)
                        pieces.append(content)
                    finish = choice.get("finish_reason") or finish
        finally:
            response.close()  # its own file when the server closes the connection
            conn.close()
        if not stamps or "completion_tokens" not in usage:
            raise RuntimeError("the stream carried no content or no usage chunk")
        count = int(usage["completion_tokens"])
        span = stamps[-1] - stamps[0]
        speed = (count - 1) / span if count > 1 and span > 0 else float("nan")
        return StreamRun(
            stamps[0] - started,
            speed,
            count,
            int(usage["prompt_tokens"]),
            "".join(pieces),
            finish,
        )

    def complete(self, tokens: int) -> tuple[float, dict[str, Any]]:
        """(latency s, response body) of one non-streaming request."""
        conn, response, started = self._post(chat_body(tokens, stream=False))
        try:
            body = json.loads(response.read())
        finally:
            response.close()
            conn.close()
        return time.perf_counter() - started, body


def concurrent_round(client: Client, tokens: int, clients: int) -> list[tuple[float, Any]]:
    """``clients`` threads send at once; each gets (latency, body) or (nan, the error)."""
    gate = threading.Barrier(clients)
    answers: list[tuple[float, Any]] = [(float("nan"), None)] * clients

    def one(i: int) -> None:
        gate.wait()
        try:
            answers[i] = client.complete(tokens)
        except Exception as exc:  # reported with the others, never lost
            answers[i] = (float("nan"), exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def answered_in_full(body: Any, text: str, tokens: int) -> bool:
    """Whether a non-streaming reply is the whole greedy reply of the single client."""
    if not isinstance(body, dict) or not body.get("choices"):
        return False
    choice = body["choices"][0]
    usage = body.get("usage") or {}
    return (
        choice.get("message", {}).get("content") == text
        and usage.get("completion_tokens") == tokens
        and choice.get("finish_reason") in ("stop", "length")
    )


class ServingWorker(bench_chat.WorkerModel):  # type: ignore[name-defined]
    """The chat worker with its model loaded, serving it over HTTP."""

    def __init__(self, folder: Path, precision: str, device: str) -> None:
        self.served: list[dict[str, Any]] = []  # before start: events may come at once
        self.cleanup = "clean up: not done"
        super().__init__(folder, precision, device)
        self.key = secrets.token_urlsafe(32)
        request = ServeRequest(api_key=self.key, host="127.0.0.1", port=0, max_queue=16)
        self.job.send(request.op, **request.fields())
        try:
            answer = self._answer("serving")
        except BaseException:
            self.job.send("exit")  # a failed serve leaves the worker and its model running
            if self.job.wait(30) is None:
                self.job.cancel()
            raise
        self.url = str(answer["url"])
        self.port = int(answer["port"])

    def _on_event(self, event: Any) -> None:
        if isinstance(event, Result) and event.data.get("kind") in ("served", "serve_queue"):
            if event.data.get("kind") == "served":
                self.served.append(dict(event.data))
            return
        super()._on_event(event)

    def _answer(self, kind: str) -> dict[str, Any]:
        while True:
            event = self.events.get(timeout=120)
            if isinstance(event, WorkerError):
                raise SystemExit(f"the worker refused {kind}: {event.kind}: {event.message}")
            if isinstance(event, JobOutcome):
                raise SystemExit(f"the worker ended while waiting for {kind}: {event}")
            if isinstance(event, Result) and event.data.get("kind") == kind:
                return dict(event.data)

    def close(self) -> None:
        """serve_stop, exit, wait; then check no process and no listener is left."""
        self.job.send("serve_stop")
        stopped = self._answer("serve_stopped")
        self.job.send("exit")
        outcome = self.job.wait(30)
        if outcome is None:
            self.job.cancel()
            raise SystemExit("the worker did not exit within 30 s after exit; it was killed")
        pid = self.job.pid
        alive = pid is not None and psutil.pid_exists(pid)
        with socket.socket() as probe:
            listening = probe.connect_ex(("127.0.0.1", self.port)) == 0
        self.cleanup = (
            f"clean up: serve_stopped ({stopped.get('reason')}, "
            f"{stopped.get('served_requests')} requests served), worker {outcome}; "
            f"process left: {'YES' if alive else 'no'}; port still open: "
            f"{'YES' if listening else 'no'}"
        )
        if alive or listening:
            raise SystemExit(f"{self.cleanup}\nthe server left a process or an open port behind")


def reference_text(raw: Any, tokens: int) -> tuple[str, int, int]:
    """(text, new tokens, prompt tokens) of one plain greedy generate, decoded as the
    server decodes (special tokens skipped), to check both sides do the same work."""
    with raw.torch.inference_mode():
        ids = raw.model.generate(
            **raw.inputs,
            max_new_tokens=tokens,
            do_sample=False,
            repetition_penalty=1.0,
            pad_token_id=raw.tokenizer.pad_token_id,
        )
    prompt = int(raw.inputs["input_ids"].shape[-1])
    new = ids[0, prompt:]
    return raw.tokenizer.decode(new, skip_special_tokens=True), int(new.shape[-1]), prompt


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.model or bench_chat.build_model(Path(tmp), args.hidden, args.layers)
        worker = ServingWorker(folder, args.precision, args.device)
        try:
            raw = bench_chat.RawModel(folder, args.precision, args.device)
            if worker.loaded.get("threads"):
                # Same CPU threads on both sides: this measures HTTP, not threading.
                raw.torch.set_num_threads(int(worker.loaded["threads"]))
            client = Client(worker.url, worker.key)
            raw.run(8)  # warm-up: first-call allocations, kernel selection, imports
            client.stream(8)
            ref_text, ref_tokens, ref_prompt = reference_text(raw, args.tokens)
            raw_runs, http_runs = [], []
            for _ in range(args.runs):
                raw_runs.append(raw.run(args.tokens))
                http_runs.append(client.stream(args.tokens))
            rounds = [concurrent_round(client, args.tokens, CLIENTS) for _ in range(args.rounds)]
        finally:
            worker.close()
    report(args, folder, worker, (ref_text, ref_tokens, ref_prompt), raw_runs, http_runs, rounds)


def report(
    args: argparse.Namespace,
    folder: Path,
    worker: Any,
    reference: tuple[str, int, int],
    raw_runs: list[tuple[float, float, int]],
    http_runs: list[StreamRun],
    rounds: list[list[tuple[float, Any]]],
) -> None:
    """Print the figures, each against its goal, and ``ratio X`` last."""
    ref_text, ref_tokens, ref_prompt = reference
    loaded = worker.loaded
    print(
        f"model {folder.name}: {loaded.get('parameters')} parameters, {args.precision} on "
        f"{loaded.get('device_name')} ({loaded.get('threads')} threads), {args.tokens} new "
        f"tokens asked, {args.runs} runs each, served at {worker.url}"
    )
    counts = sorted({r[2] for r in raw_runs}), sorted({h.completion_tokens for h in http_runs})
    prompts = sorted({h.prompt_tokens for h in http_runs})
    print(
        f"same work: new tokens raw {counts[0]} / HTTP {counts[1]} "
        f"({'agree' if counts[0] == counts[1] == [ref_tokens] else 'DIFFER'}); prompt tokens "
        f"raw {ref_prompt} / HTTP {prompts} ({'agree' if prompts == [ref_prompt] else 'DIFFER'});"
        f" HTTP text {'equals' if all(h.text == ref_text for h in http_runs) else 'DIFFERS from'}"
        " the raw greedy text"
    )
    served = [
        s for s in worker.served if s.get("stream") and s.get("completion_tokens") == args.tokens
    ]
    rows = [
        ("raw model.generate", [r[1] for r in raw_runs], [r[0] for r in raw_runs], ""),
        ("HTTP stream", [h.tokens_per_s for h in http_runs], [h.ttft_s for h in http_runs], ""),
        (
            "server (served events)",
            [float(s["tokens_per_s"]) for s in served if s.get("tokens_per_s")],
            [float(s["ttft_s"]) for s in served if s.get("ttft_s") is not None],
            f", as the worker timed them from arrival, {len(served)} requests",
        ),
    ]
    for label, speeds, ttfts, note in rows:
        if speeds and ttfts:
            print(
                f"{label:<22} {statistics.median(speeds):8.1f} tok/s  "
                f"TTFT {statistics.median(ttfts) * 1000:7.1f} ms  (medians{note})"
            )
    ratios = [h.tokens_per_s / r[1] for r, h in zip(raw_runs, http_runs, strict=True)]
    overheads = [(h.ttft_s - r[0]) * 1000 for r, h in zip(raw_runs, http_runs, strict=True)]
    ratio, overhead = statistics.median(ratios), statistics.median(overheads)
    print("paired ratios " + " ".join(f"{x:.3f}" for x in ratios))
    print("paired TTFT overheads ms " + " ".join(f"{x:.1f}" for x in overheads))
    answers = [answer for one_round in rounds for answer in one_round]
    full = [answered_in_full(body, ref_text, ref_tokens) for _, body in answers]
    for _, body in answers:
        if isinstance(body, Exception):
            print(f"  a concurrent client failed: {body}")
    print(
        f"{CLIENTS} concurrent clients x {len(rounds)} rounds: {sum(full)}/{len(full)} answered "
        "in full (the single client's greedy text and token count)"
    )
    good = [latency for (latency, _), ok in zip(answers, full, strict=True) if ok]
    if good:
        print(
            f"concurrent latency p50 {percentile(good, 50):.3f} s, p99 {percentile(good, 99):.3f}"
            f" s (from {len(good)} samples: p99 of so few lies near the maximum, "
            f"{max(good):.3f} s; one generation at a time, so the last waits for {CLIENTS - 1})"
        )
    print(worker.cleanup)
    print(
        f"tokens/s ratio {ratio:.3f} (goal >= {RATIO_GOAL}) "
        f"{verdict(ratio, RATIO_GOAL, at_least=True)}"
    )
    print(
        f"TTFT overhead {overhead:.1f} ms (median of pairs; goal <= {TTFT_GOAL_MS:.0f} ms) "
        f"{verdict(overhead, TTFT_GOAL_MS, at_least=False)}"
    )
    print(
        f"all {len(full)} concurrent requests answered in full: {'ok' if all(full) else 'MISSED'}"
    )
    print(f"ratio {ratio:.3f}")
    if not all(full):
        sys.exit("a concurrent client was not answered in full (see above)")


if __name__ == "__main__":
    main()
