"""``rocmpanel serve`` end to end: the real command in a subprocess, a real chat worker with
the tiny LLaMA on the CPU, the official ``openai`` client, then Ctrl+C (SIGINT) or SIGTERM:
exit 0, "stopped" said, the port closed, no process left."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

pytestmark = [
    pytest.mark.torch,
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]

SERVING_RE = re.compile(
    r"^Serving tiny-llama at (http://127\.0\.0\.1:(\d+)/v1) \(context 4096 tokens, up to 16 "
    r"requests waiting\)\.$"
)
SERVED_RE = re.compile(
    r"^\d\d:\d\d:\d\d POST /v1/chat/completions 200 (\d+)\+(\d+) tokens \d+\.\d\d s"
    r"( \d+\.\d tok/s)?$"
)


@dataclass
class Serve:
    """One ``rocmpanel serve`` process and its output, read on threads as it comes."""

    proc: subprocess.Popen[str]
    home: Path
    out: queue.Queue[str] = field(default_factory=queue.Queue)
    lines: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    def close(self) -> None:
        """After the process ended: the rest of its output read, its pipes closed."""
        for reader in self.readers:
            reader.join(30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def line(self, timeout: float = 240.0) -> str:
        text = self.out.get(timeout=timeout)
        self.lines.append(text)
        return text

    def until(self, pattern: re.Pattern[str], timeout: float = 240.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            match = pattern.match(self.line(max(0.1, deadline - time.monotonic())))
            if match:
                return match

    def ready(self) -> re.Match[str]:
        """Wait for the server: its "Serving" line, then the rest of the announcement."""
        match = self.until(SERVING_RE)
        while self.line() != "Press Ctrl+C to stop.":
            pass
        return match

    @property
    def key(self) -> str:
        return (self.home / "config" / "serve" / "api-key").read_text().strip()


def start(model: Path, home: Path, *extra: str) -> Serve:
    env = dict(os.environ, ROCMPANEL_HOME=str(home), HOME=str(home / "user"))
    env.pop("ROCMPANEL_API_KEY", None)
    (home / "user").mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocmpanel", "serve", "--model", str(model), "--device", "cpu",
         "--precision", "fp32", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    serve = Serve(proc, home)

    def pump(stream: object, into: object) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            into(raw.rstrip("\n"))  # type: ignore[operator]

    for stream, into in ((proc.stdout, serve.out.put), (proc.stderr, serve.err.append)):
        reader = threading.Thread(target=pump, args=(stream, into), daemon=True)
        reader.start()
        serve.readers.append(reader)
    return serve


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def stop_with(serve: Serve, signum: int) -> tuple[int, list[psutil.Process]]:
    """Send ``signum``; the exit status, and the command's processes as they were before."""
    family = [psutil.Process(serve.proc.pid), *psutil.Process(serve.proc.pid).children(True)]
    serve.proc.send_signal(signum)
    code = serve.proc.wait(timeout=60)
    serve.close()
    while not serve.out.empty():  # the rest of its output
        serve.line()
    return code, family


@pytest.fixture(scope="module")
def served(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    serve = start(tiny_model, tmp_path_factory.mktemp("serve-home"), "--port", "0")
    serve.ready()
    yield serve
    end(serve)


def end(serve: Serve) -> None:
    """A test that failed half-way: end the command and every process it started."""
    if serve.proc.poll() is None:
        family = [psutil.Process(serve.proc.pid), *psutil.Process(serve.proc.pid).children(True)]
        for proc in family:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(family, timeout=30)
    serve.close()


def test_the_official_client_gets_an_answer_and_the_request_is_printed(served: Serve) -> None:
    from openai import OpenAI

    url = SERVING_RE.match(next(x for x in served.lines if x.startswith("Serving ")))
    assert url is not None
    assert served.lines[1] == (
        f"API key: {served.key[:7]}…{served.key[-4:]} (new, stored in "
        f"{served.home / 'config' / 'serve' / 'api-key'})."
    )
    assert served.key not in "\n".join(served.lines)  # masked without --show-key
    client = OpenAI(base_url=url.group(1), api_key=served.key, max_retries=0, timeout=60)
    reply = client.chat.completions.create(
        model="anything",
        messages=[{"role": "user", "content": "Hello"}],
        max_tokens=5,
        temperature=0,
    )
    assert reply.model == "tiny-llama"
    assert reply.usage is not None and 1 <= reply.usage.completion_tokens <= 5
    line = served.until(SERVED_RE, timeout=60)
    assert (int(line.group(1)), int(line.group(2))) == (
        reply.usage.prompt_tokens,
        reply.usage.completion_tokens,
    )


def test_a_wrong_key_is_refused_and_printed(served: Serve) -> None:
    import openai

    url = SERVING_RE.match(next(x for x in served.lines if x.startswith("Serving ")))
    assert url is not None
    client = openai.OpenAI(base_url=url.group(1), api_key="rp-wrong-key-0123456789", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        client.models.list()
    assert caught.value.status_code == 401
    assert re.match(r"^\d\d:\d\d:\d\d GET /v1/models 401 ", served.line(timeout=30))


def test_a_second_server_on_the_same_port_is_refused_before_loading(
    served: Serve, tiny_model: Path, tmp_path: Path
) -> None:
    url = SERVING_RE.match(next(x for x in served.lines if x.startswith("Serving ")))
    assert url is not None
    port = url.group(2)
    other = start(tiny_model, tmp_path / "home", "--port", port)
    assert other.proc.wait(timeout=60) == 1
    other.close()
    assert other.err == [
        f"rocmpanel serve: port {port} on 127.0.0.1 is already in use by another program: "
        "choose another with --port (--port 0 picks a free one)."
    ]


def test_ctrl_c_stops_the_server_and_leaves_nothing_behind(served: Serve) -> None:
    url = SERVING_RE.match(next(x for x in served.lines if x.startswith("Serving ")))
    assert url is not None
    port = int(url.group(2))
    assert port_open(port)
    code, family = stop_with(served, signal.SIGINT)
    assert code == 0, "\n".join(served.err)
    assert served.lines[-1] == "Server stopped (2 requests served)."
    assert "Stopping the server…" in served.err
    assert not port_open(port)
    assert len(family) >= 2  # the command and its worker
    _gone, alive = psutil.wait_procs(family, timeout=10)
    assert alive == []
    assert not any("Traceback" in line for line in served.err)


def test_sigterm_stops_it_the_same_way(tiny_model: Path, tmp_path: Path) -> None:
    serve = start(tiny_model, tmp_path / "home", "--port", "0", "--show-key")
    port = int(serve.ready().group(2))
    stored = tmp_path / "home" / "config" / "serve" / "api-key"
    assert serve.lines[1] == f"API key: {serve.key} (new, stored in {stored})."
    code, family = stop_with(serve, signal.SIGTERM)
    assert code == 0, "\n".join(serve.err)
    assert serve.lines[-1] == "Server stopped (0 requests served)."
    assert not port_open(port)
    _gone, alive = psutil.wait_procs(family, timeout=10)
    assert alive == []


def test_a_killed_command_leaves_no_worker_behind(tiny_model: Path, tmp_path: Path) -> None:
    serve = start(tiny_model, tmp_path / "home", "--port", "0")
    serve.ready()
    (worker,) = psutil.Process(serve.proc.pid).children(recursive=True)
    serve.proc.kill()  # kill -9: nothing in the command runs; the worker sees end of stdin
    serve.proc.wait(30)
    serve.close()
    try:
        worker.wait(timeout=20)
    except psutil.TimeoutExpired:
        worker.kill()
        worker.wait(30)
        raise AssertionError("the worker outlived the killed command") from None


def test_ctrl_c_while_the_model_loads_ends_at_once(tiny_model: Path, tmp_path: Path) -> None:
    serve = start(tiny_model, tmp_path / "home", "--port", "0")
    try:
        command = psutil.Process(serve.proc.pid)
        deadline = time.monotonic() + 60
        while not command.children(recursive=True):  # the worker started: it loads now
            assert time.monotonic() < deadline, "no worker started"
            time.sleep(0.05)
        time.sleep(0.3)
        began = time.monotonic()
        code, family = stop_with(serve, signal.SIGINT)
        took = time.monotonic() - began
    except BaseException:
        end(serve)
        raise
    assert code == 0, "\n".join(serve.err)
    assert "Stopped while the model was loading." in serve.err
    assert not any(line.startswith(("Loaded ", "Serving ")) for line in serve.err + serve.lines)
    assert took < 10.0  # the load was cut, not waited for (STOP_GRACE_S is 15 s)
    _gone, alive = psutil.wait_procs(family, timeout=10)
    assert alive == []
    assert not any("Traceback" in line for line in serve.err)
