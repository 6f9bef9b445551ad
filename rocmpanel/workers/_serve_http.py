"""The chat worker's HTTP server: the FastAPI app, its guards, and one request's answer.

A private sibling of ``chat.py``; imported only when serving starts (fastapi, starlette).
The FastAPI routes sit inside the guards of ``_serve_guards`` (accounting, CORS, key,
body cap). Every error leaves in OpenAI's shape (``_serve_api.ApiError.body``). A request is
read here, tokenized on the server's one tokenizer thread (a fast tokenizer must not be
used from two threads at once, so never the engine's), checked against the context, and
queued for the main thread as an :class:`~_serve_bridge.HttpJob`; its text comes back
piece by piece, as server-sent events or as one response.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from _serve_api import (
    ApiError,
    ApiRequest,
    check_context,
    check_length,
    parse_chat,
    parse_completion,
)
from _serve_bridge import Backlog, Failed, Finished, HttpJob, Jobs, ServedRecord
from _serve_guards import RECORD, wrap
from _serve_shapes import chunk, completion_id, models_list, response, usage_chunk

ROUTES_TEXT = "GET /v1/models, POST /v1/chat/completions, POST /v1/completions and GET /health"


@dataclass
class Service:
    """What the app needs from the server it runs in (built by ``_serve_front``)."""

    api_key: str
    model_id: str
    created: int
    context_length: int
    request_timeout_s: float
    max_body_bytes: int
    cors_origins: tuple[str, ...]
    backlog: Backlog
    tokenizer_pool: Executor  # one thread: the only one that uses ``encode``'s tokenizer
    encode: Callable[[ApiRequest], list[int]]
    submit: Callable[[HttpJob], None]  # into the worker's command queue (main thread)
    on_served: Callable[[], None]
    longest_token: int = 0  # characters in the tokenizer's longest token (0: unknown)
    jobs: Jobs = field(default_factory=Jobs)  # the jobs not done yet (a job removes itself)
    closed: bool = False

    def cancel(self, job: HttpJob, error: ApiError | None = None) -> None:
        """Stop ``job``; one still queued is dropped and its place freed at once."""
        if job.cancel(error) == "queued":
            self.backlog.leave()
            self.jobs.discard(job)
            job.record.done("job")

    def stop_all(self, error: ApiError) -> None:
        for job in self.jobs.cancel_all(error):
            self.backlog.leave()
            self.jobs.discard(job)
            job.record.done("job")


def stopping_error() -> ApiError:
    return ApiError(
        503,
        "The server is stopping (it was switched off or stopped, or its model unloaded).",
        type="server_error",
        code="server_stopping",
    )


def sse(data: Any) -> str:
    """One server-sent event holding ``data`` as JSON."""
    return f"data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


async def read_json(request: Any) -> Any:
    body = await request.body()
    try:
        return json.loads(body)
    except ValueError as exc:
        raise ApiError(400, f"The request body is not valid JSON ({exc}).") from None
    except RecursionError:
        raise ApiError(400, "The request body's JSON is nested too deeply.") from None


async def _wait_disconnect(request: Any) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _collect(job: HttpJob) -> tuple[str, Finished]:
    pieces: list[str] = []
    while True:
        item = await job.items.get()
        if isinstance(item, str):
            pieces.append(item)
        elif isinstance(item, Failed):
            raise item.error
        else:
            return "".join(pieces), item


def timeout_error(seconds: float) -> ApiError:
    return ApiError(
        504,
        f"The request took longer than this server's limit of {seconds:g} s and was stopped.",
        type="server_error",
        code="timeout",
    )


class Answering:
    """The route handlers of one server."""

    def __init__(self, service: Service) -> None:
        self.service = service

    async def completions(self, request: Any, kind: str) -> Any:
        from starlette.requests import ClientDisconnect
        from starlette.responses import JSONResponse, Response, StreamingResponse

        service = self.service
        record: ServedRecord = request.scope[RECORD]
        if service.closed:
            raise stopping_error()
        try:
            body = await read_json(request)
        except ClientDisconnect:
            record.disconnected = True
            return Response(status_code=400)
        req = parse_chat(body) if kind == "chat" else parse_completion(body)
        record.stream = req.stream
        param = "messages" if kind == "chat" else "prompt"
        check_length(req, service.context_length, service.longest_token, param=param)
        loop = asyncio.get_running_loop()
        deadline = record.arrived + service.request_timeout_s
        tokenized = loop.run_in_executor(service.tokenizer_pool, service.encode, req)
        try:  # the deadline covers the wait for the one tokenizer thread too
            ids = await asyncio.wait_for(tokenized, max(0.0, deadline - time.perf_counter()))
        except asyncio.TimeoutError:
            raise timeout_error(service.request_timeout_s) from None
        record.prompt_tokens = len(ids)
        if service.closed:  # it stopped while this request was tokenized
            raise stopping_error()
        if not ids:
            raise ApiError(400, "The prompt is empty: give the model some text.", param=param)
        max_new = check_context(len(ids), req.max_tokens, service.context_length, param=param)
        job = HttpJob(loop, req, ids, max_new, record, deadline, service.backlog)
        record.expect_job()
        if not service.jobs.add(job):  # the server stopped since the check above
            record.done("job")
            raise stopping_error()
        try:
            service.backlog.enter()  # ApiError 429 when full
        except ApiError:
            service.jobs.discard(job)
            record.done("job")
            raise
        job.on_end = service.jobs.discard
        try:
            service.submit(job)
        except BaseException:
            service.cancel(job)
            raise
        meta = {
            "id": completion_id(req.kind),
            "created": int(time.time()),
            "model": service.model_id,
        }
        if req.stream:
            return StreamingResponse(
                self._stream(job, meta),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        text, finished = await self._wait(request, job)
        return JSONResponse(
            response(
                req,
                text=text,
                finish_reason=finished.finish_reason or "stop",
                prompt_tokens=finished.prompt_tokens,
                completion_tokens=finished.completion_tokens,
                **meta,
            )
        )

    async def _wait(self, request: Any, job: HttpJob) -> tuple[str, Finished]:
        """The whole reply; a client that goes away or a deadline that passes stops it."""
        record = job.record
        collector = asyncio.ensure_future(_collect(job))
        watcher = asyncio.ensure_future(_wait_disconnect(request))
        try:
            remaining = max(0.0, job.deadline - time.perf_counter())
            done, _ = await asyncio.wait(
                {collector, watcher}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
            if collector in done:
                return collector.result()  # or the ApiError of a failed generation
            if watcher in done:
                record.disconnected = True
                self.service.cancel(job)
                raise ApiError(400, "The client went away.")  # nobody reads it
            error = timeout_error(self.service.request_timeout_s)
            self.service.cancel(job)
            raise error
        finally:
            for task in (collector, watcher):
                task.cancel()

    async def _stream(self, job: HttpJob, meta: dict[str, Any]) -> AsyncIterator[str]:
        """Server-sent events: the role, the text as it comes, the end, ``[DONE]``."""
        req, record = job.request, job.record
        ended = False
        try:
            if req.kind == "chat":
                yield sse(chunk(req, role=True, text="", **meta))
            while True:
                remaining = job.deadline - time.perf_counter()
                if remaining <= 0:
                    raise asyncio.TimeoutError
                item = await asyncio.wait_for(job.items.get(), remaining)
                if isinstance(item, str):
                    yield sse(chunk(req, text=item, **meta))
                    continue
                ended = True
                if isinstance(item, Failed):
                    record.status, record.error = item.error.status, item.error.message
                    yield sse(item.error.body())
                    return
                reason = item.finish_reason or "stop"
                yield sse(chunk(req, finish_reason=reason, **meta))
                if req.include_usage:
                    counts = {"prompt_tokens": item.prompt_tokens}
                    counts["completion_tokens"] = item.completion_tokens
                    yield sse(usage_chunk(req, **meta, **counts))
                yield "data: [DONE]\n\n"
                return
        except asyncio.TimeoutError:
            ended = True
            error = timeout_error(self.service.request_timeout_s)
            record.status, record.error = error.status, error.message
            self.service.cancel(job)
            yield sse(error.body())
        finally:
            if not ended:  # cancelled: the client closed the connection
                record.disconnected = True
                self.service.cancel(job)


def build_app(service: Service) -> Any:
    """The ASGI app that uvicorn runs (see the module docstring for its layers)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    answering = Answering(service)

    def answer(request: Request, error: ApiError) -> JSONResponse:
        record = request.scope.get(RECORD)
        if isinstance(record, ServedRecord) and record.error is None:
            record.error = error.message
        return JSONResponse(error.body(), status_code=error.status, headers=error.headers)

    async def on_api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return answer(request, exc)

    async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            message = f"There is no {request.url.path} here: this server answers {ROUTES_TEXT}."
            error = ApiError(404, message, code="not_found")
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path} ({ROUTES_TEXT})."
            error = ApiError(405, message, code="method_not_allowed")
        else:
            error = ApiError(exc.status_code, str(exc.detail))
        return answer(request, error)

    async def on_invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}"
            for e in exc.errors()
        )
        return answer(request, ApiError(400, f"The request is not valid ({problems})."))

    async def on_failure(request: Request, exc: Exception) -> JSONResponse:
        message = f"The server failed while answering ({type(exc).__name__}: {exc})."
        return answer(request, ApiError(500, message, type="server_error"))

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(HTTPException, on_http_error)
    app.add_exception_handler(RequestValidationError, on_invalid)
    app.add_exception_handler(Exception, on_failure)

    # Starlette-style routes (the handler gets the request as it is): the bodies are read
    # and checked by _serve_api, not by FastAPI's models.
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def models(request: Request) -> JSONResponse:
        return JSONResponse(models_list(service.model_id, service.created))

    async def chat_completions(request: Request) -> Any:
        return await answering.completions(request, "chat")

    async def completions(request: Request) -> Any:
        return await answering.completions(request, "completion")

    app.router.add_route("/health", health, methods=["GET"])
    app.router.add_route("/v1/models", models, methods=["GET"])
    app.router.add_route("/v1/chat/completions", chat_completions, methods=["POST"])
    app.router.add_route("/v1/completions", completions, methods=["POST"])
    return wrap(
        app, service.api_key, service.max_body_bytes, service.cors_origins, service.on_served
    )


def encode_with(tokenizer: Any) -> Callable[[ApiRequest], list[int]]:
    """The token ids of a request's prompt: the chat template for chat, the text as it is
    for completions. Run on the tokenizer thread only."""

    def encode(req: ApiRequest) -> list[int]:
        if req.kind == "chat":
            try:
                out = tokenizer.apply_chat_template(
                    [dict(m) for m in req.messages],
                    add_generation_prompt=True,
                    tokenize=True,
                    return_dict=True,
                )
            except Exception as exc:  # a template that refuses the roles or their order
                raise ApiError(
                    400,
                    f"The model's chat template refused these messages: {exc}",
                    param="messages",
                ) from None
            ids: Sequence[int] = out["input_ids"]
        else:
            ids = tokenizer(req.prompt)["input_ids"]
        return [int(i) for i in ids]

    return encode
