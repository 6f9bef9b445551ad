"""Serving the loaded model over HTTP: starting and stopping the server, and its jobs.

A private sibling of ``chat.py``. :class:`ServeControl` is shared by the stdin reader
(``serve_stop`` and the end of input act at once) and the main thread (``serve`` is queued
after a load; ``unload`` and ``load`` stop the server first). The server is uvicorn on a
daemon thread of its own, on a socket bound here first (so a port in use is a clear
error, and port 0 gives the real port at once); its requests come back to the main thread
as ``http`` items of the one command queue, where :meth:`ServeControl.run_job` generates
them with the engine (see ``ChatEngine.generate`` for why the main thread). fastapi and
uvicorn are imported only here, when serving starts. Sources: uvicorn's
``Server.capture_signals`` skips signal handlers off the main thread, and
``Server.startup`` takes ready sockets (uvicorn/server.py, 0.55).
"""

from __future__ import annotations

import errno
import math
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _wire
from _chat_errors import SERVE_PACKAGES, WorkerFailure
from _chat_generate import decode_speed
from _chat_load import FALLBACK_TEMPLATE
from _chat_requests import Sampling
from _serve_api import ApiError
from _serve_bridge import Backlog, Failed, Finished, HttpJob
from _serve_shapes import StopMatcher

START_WAIT_S = 20.0  # how long uvicorn may take to listen
GRACE_S = 3.0  # how long stopping waits for connections to close before cutting them


@dataclass(frozen=True)
class ServeConfig:
    """A checked ``serve`` command (the key travels on stdin only, never argv)."""

    host: str
    port: int
    api_key: str
    cors_origins: tuple[str, ...]
    max_queue: int
    request_timeout_s: float
    max_body_bytes: int
    model_id: str

    @classmethod
    def parse(cls, cmd: Mapping[str, Any]) -> ServeConfig:
        def number(key: str, default: float, low: float) -> float:
            value = cmd.get(key, default)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < low:
                raise WorkerFailure(f"{key} must be a number of at least {low:g}.", "bad_command")
            return float(value)

        key = cmd.get("api_key")
        if not isinstance(key, str) or not key.strip():
            raise WorkerFailure("Serving needs an API key; none was given.", "bad_command")
        port = number("port", 8000, 0)
        if port != int(port) or port > 65535:
            raise WorkerFailure(f"The port must be 0 to 65535, not {port:g}.", "bad_command")
        origins = cmd.get("cors_origins") or []
        if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
            raise WorkerFailure("cors_origins must be a list of origins.", "bad_command")
        return cls(
            host=str(cmd.get("host") or "127.0.0.1"),
            port=int(port),
            api_key=key.strip(),
            cors_origins=tuple(o for o in origins if o),
            max_queue=int(number("max_queue", 16, 1)),
            request_timeout_s=number("request_timeout_s", 300, 0.001),
            max_body_bytes=int(number("max_body_bytes", 4 * 1024 * 1024, 1)),
            model_id=str(cmd.get("model_id") or ""),
        )


def import_server() -> tuple[Any, Any]:
    """fastapi and uvicorn; a missing_package failure naming the ones this Python lacks."""
    missing = []
    for name in SERVE_PACKAGES:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise WorkerFailure(
            f"Serving needs {' and '.join(missing)}, which this Python lacks: install the "
            "'PyTorch + local LLM' profile (or pip install fastapi uvicorn).",
            "missing_package",
            missing=missing,
        )
    import fastapi
    import uvicorn

    return fastapi, uvicorn


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host``:``port``; port_in_use / serve_failed failures."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    if os.name == "posix":  # on Windows this flag would let two servers share the port
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1)):
            raise WorkerFailure(
                f"Port {port} on {host} is already in use by another program: choose "
                "another port with --port.",
                "port_in_use",
            ) from None
        raise WorkerFailure(
            f"Could not listen on {host}:{port} ({exc.strerror or exc}): check the address "
            "is one of this machine's and the port is allowed (ports under 1024 need root).",
            "serve_failed",
        ) from None
    return sock  # not inheritable (Python's default): a child process never holds the port


def longest_token(tokenizer: Any) -> int:
    """Characters in the tokenizer's longest vocabulary entry: no token decodes to more
    (byte-level entries have one character per byte), so a prompt of more characters than
    the context times this cannot fit. 0 when the vocabulary cannot be read."""
    try:
        return max((len(str(entry)) for entry in tokenizer.get_vocab()), default=0)
    except Exception:  # a tokenizer without get_vocab: no early check
        return 0


def raise_open_files_limit() -> None:
    """Let the worker hold as many connections as the system allows (the soft limit is
    often 1024 on desktops, far under the hard one): idle connections then starve the
    server later. POSIX only; a refusal is not an error."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else 65536
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, 65536), hard))
    except (OSError, ValueError):
        pass


class HttpServer:
    """One running uvicorn server and what it serves."""

    def __init__(self, config: ServeConfig, service: Any, server: Any, thread: Any) -> None:
        self.config, self.service, self.server, self.thread = config, service, server, thread
        self.port = config.port
        self.served = 0
        self._count_lock = threading.Lock()

    def count(self) -> None:
        with self._count_lock:
            self.served += 1

    def stop(self) -> None:
        """Stop listening, stop every request, close the connections, join the thread."""
        from _serve_http import stopping_error

        self.service.closed = True
        self.service.stop_all(stopping_error())
        self.server.should_exit = True
        self.thread.join(GRACE_S + 2.0)
        if self.thread.is_alive():
            self.server.force_exit = True
            self.thread.join(2.0)
        self.service.backlog.close()
        self.service.tokenizer_pool.shutdown(wait=False, cancel_futures=True)


class ServeControl:
    """The worker's one HTTP server, if any: start, stop, and the jobs its requests make."""

    def __init__(self, commands: queue.Queue[Any] | None = None) -> None:
        self.commands = commands
        self.current: HttpServer | None = None
        self._lock = threading.Lock()
        self.make_item: Callable[[HttpJob], Any] = lambda job: job
        self.asked_stops = 0  # serve_stop and exit so far: a serve asked before one is void

    @property
    def serving(self) -> bool:
        return self.current is not None

    def ask_stop(self, reason: str, quiet: bool = False) -> None:
        """The stdin reader's stop (``serve_stop``: "asked"; "exit"): also voids every
        ``serve`` still waiting in the queue, which was asked before it."""
        with self._lock:
            self.asked_stops += 1
        self.stop(reason, quiet)

    def stop(self, reason: str, quiet: bool = False) -> None:
        """Stop serving and say so (``serve_stopped``); ``quiet``: nothing when idle."""
        with self._lock:
            current, self.current = self.current, None
        if current is None:
            if not quiet:
                _wire.result(
                    {"kind": "serve_stopped", "reason": "not_serving", "served_requests": 0}
                )
            return
        current.stop()
        _wire.result({"kind": "serve_stopped", "reason": reason, "served_requests": current.served})

    def start(self, engine: Any, cmd: Mapping[str, Any], asked_at: int | None = None) -> None:
        """Serve ``engine``'s model as ``cmd`` asks (the main thread); a WorkerFailure of
        kind bad_command, no_model, missing_package, port_in_use or serve_failed.
        ``asked_at``: :attr:`asked_stops` when the command was read; a stop asked since
        then wins (``serve_stopped`` "asked", no server)."""
        if asked_at is not None and asked_at != self.asked_stops:
            _wire.result({"kind": "serve_stopped", "reason": "asked", "served_requests": 0})
            return
        config = ServeConfig.parse(cmd)
        if engine.model is None:
            raise WorkerFailure("No model is loaded: load one before serving it.", "no_model")
        _fastapi, uvicorn = import_server()
        if self.current is not None:
            self.stop("restart")
        try:
            server = self._launch(engine, config, uvicorn)
        except WorkerFailure:
            raise
        except Exception as exc:
            raise WorkerFailure(
                f"The server could not start: {type(exc).__name__}: {exc}", "serve_failed"
            ) from exc
        with self._lock:
            void = asked_at is not None and asked_at != self.asked_stops
            if not void:
                self.current = server
        if void:  # a stop came while it started
            server.stop()
            _wire.result({"kind": "serve_stopped", "reason": "asked", "served_requests": 0})
            return
        host = config.host
        _wire.result(
            {
                "kind": "serving",
                "url": f"http://{f'[{host}]' if ':' in host else host}:{server.port}",
                "host": host,
                "port": server.port,
                "model_id": server.service.model_id,
                "context_length": engine.context_length,
                "max_queue": config.max_queue,
                "request_timeout_s": config.request_timeout_s,
                "cors_origins": list(config.cors_origins),
            }
        )

    def _launch(self, engine: Any, config: ServeConfig, uvicorn: Any) -> HttpServer:
        import transformers

        # The server's own tokenizer, used by its one tokenizer thread only: a fast
        # tokenizer used from two threads at once fails ("Already borrowed").
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            engine.path, trust_remote_code=engine.trust_remote_code
        )
        if not getattr(tokenizer, "chat_template", None):
            tokenizer.chat_template = FALLBACK_TEMPLATE
        raise_open_files_limit()
        sock = bind(config.host, config.port)
        try:
            return self._run_on(engine, config, uvicorn, tokenizer, sock)
        except BaseException:
            sock.close()
            raise

    def _run_on(
        self, engine: Any, config: ServeConfig, uvicorn: Any, tokenizer: Any, sock: Any
    ) -> HttpServer:
        """Start uvicorn on the bound ``sock`` and wait until it listens."""
        from _serve_http import Service, build_app, encode_with

        holder: list[HttpServer] = []
        service = Service(
            api_key=config.api_key,
            model_id=config.model_id or Path(engine.path).name,
            created=int(getattr(engine, "loaded_at", 0) or time.time()),
            context_length=engine.context_length,
            request_timeout_s=config.request_timeout_s,
            max_body_bytes=config.max_body_bytes,
            cors_origins=config.cors_origins,
            backlog=Backlog(config.max_queue),
            tokenizer_pool=ThreadPoolExecutor(1, thread_name_prefix="serve-tokenizer"),
            encode=encode_with(tokenizer),
            longest_token=longest_token(tokenizer),
            submit=self._submit,
            on_served=lambda: holder[0].count() if holder else None,
        )
        uv_config = uvicorn.Config(
            build_app(service),
            host=config.host,
            port=config.port,
            loop="asyncio",
            http="h11",
            ws="none",
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=GRACE_S,
        )
        server = uvicorn.Server(uv_config)
        failure: list[BaseException] = []

        def run() -> None:
            try:
                server.run(sockets=[sock])
            except BaseException as exc:  # SystemExit from a failed startup too
                failure.append(exc)
            finally:
                sock.close()

        thread = threading.Thread(target=run, name="serve-http", daemon=True)
        http = HttpServer(config, service, server, thread)
        http.port = int(sock.getsockname()[1])
        holder.append(http)
        thread.start()
        deadline = time.monotonic() + START_WAIT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                service.tokenizer_pool.shutdown(wait=False, cancel_futures=True)
                why = f" ({type(failure[0]).__name__}: {failure[0]})" if failure else ""
                raise WorkerFailure(f"The HTTP server did not start{why}.", "serve_failed")
            time.sleep(0.01)
        return http

    def _submit(self, job: HttpJob) -> None:
        if self.commands is None:
            raise ApiError(503, "The server is not connected to the model.", type="server_error")
        self.commands.put(self.make_item(job))

    def run_job(self, engine: Any, job: HttpJob) -> None:
        """Generate one HTTP request's reply on the main thread, posting its text as it
        comes; a stop sequence, the client leaving or the deadline end it within a token."""
        if not job.take():
            return  # dropped while it waited (its record was finished then)
        job.backlog.start()
        record, req = job.record, job.request
        matcher = StopMatcher(req.stop)
        first: list[float] = []

        def sink(text: str, stream_end: bool = False, tokens: int = 1) -> None:
            if not text or matcher.hit:
                return
            safe, reached = matcher.feed(text)
            if safe:
                if not first:
                    first.append(time.perf_counter())
                job.post_text(safe)
            if reached or time.perf_counter() > job.deadline:
                job.stop.set()  # a stop sequence, or nobody waits any more

        sampling = Sampling(
            temperature=req.sampling.temperature,
            top_p=req.sampling.top_p,
            top_k=0,
            repetition_penalty=1.0,
            seed=req.sampling.seed,
        )
        started = time.perf_counter()
        try:
            run = engine.generate_ids(job.input_ids, job.max_new, sampling, job.stop, sink)
        except Exception as exc:
            message = (
                exc.message
                if isinstance(exc, WorkerFailure)
                else f"{type(exc).__name__}: {str(exc)[:300]}"
            )
            record.error = message
            _wire.log(f"An HTTP request failed: {message}", level="warning")
            job.post(Failed(ApiError(500, message, type="server_error")))
        else:
            rest = matcher.flush()
            if rest:
                if not first:
                    first.append(time.perf_counter())
                job.post_text(rest)
            if matcher.hit or run.finish == "eos":
                finish: str | None = "stop"
            else:
                finish = "length" if run.finish == "length" else None
            record.completion_tokens = run.new_tokens
            record.finish_reason = finish
            record.ttft_s = first[0] - record.arrived if first else None
            record.tokens_per_s = decode_speed(run.new_tokens, run.first_at, run.ended)
            job.post(Finished(finish, len(job.input_ids), run.new_tokens))
        finally:
            job.end()
            job.backlog.finish(time.perf_counter() - started)
            job.on_end(job)
            record.done("job")
