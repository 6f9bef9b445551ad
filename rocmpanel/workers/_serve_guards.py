"""The guards around the chat worker's HTTP routes: accounting, CORS, the key, the body cap.

A private sibling of ``chat.py``, used by ``_serve_http`` (starlette is imported only for
CORS, when origins are allowed). All are plain ASGI middleware (no BaseHTTPMiddleware, which
would buffer streamed replies), layered outermost first: :class:`Accounting` (a ``served``
event per ``/v1/*`` request, rejections included; not ``/health``, not CORS preflights),
starlette's ``CORSMiddleware`` with exactly the allowed origins (none: no CORS headers at
all), :class:`Auth` (``Authorization: Bearer``, compared in constant time with
``hmac.compare_digest``; 401 with ``WWW-Authenticate``) and :class:`BodyCap` (413 by
Content-Length, and counted while a body without one streams in).
"""

from __future__ import annotations

import contextlib
import hmac
import json
from collections.abc import Callable, Sequence
from typing import Any

import _wire
from _serve_api import ApiError
from _serve_bridge import ServedRecord

RECORD = "rocmpanel.served"  # the scope key of a /v1/* request's ServedRecord
WHERE_THE_KEY_IS = (
    "rocmpanel shows the key in the Chat tab's Serve panel, and rocmpanel serve prints "
    "where it is stored"
)


async def _send_error(send: Any, error: ApiError) -> None:
    body = json.dumps(error.body(), ensure_ascii=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in error.headers.items()
    ]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _is_api(scope: dict[str, Any]) -> bool:
    path = str(scope.get("path", ""))
    return scope["type"] == "http" and (path == "/v1" or path.startswith("/v1/"))


class Accounting:
    """A ``served`` event for every ``/v1/*`` request (not /health, not CORS preflights)."""

    def __init__(self, app: Any, on_served: Callable[[], None]) -> None:
        self.app, self.on_served = app, on_served  # on_served: after each served event

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not _is_api(scope) or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("", 0)
        record = ServedRecord(scope["method"], scope["path"], str(client[0]), self.on_served)
        scope[RECORD] = record

        async def counted(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record.response_status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counted)
        except Exception as exc:
            # The app's handler has answered (a 500 in OpenAI's shape) and starlette raises
            # it again for the server's log: one line there, not a traceback.
            problem = f"{type(exc).__name__}: {str(exc)[:200]}"
            record.error = record.error or f"The server failed: {problem}."
            _wire.log(f"An HTTP request failed: {problem}", level="warning")
            if record.response_status is None:
                with contextlib.suppress(Exception):  # the client may be gone
                    await _send_error(send, ApiError(500, record.error, type="server_error"))
        finally:
            record.done("http")


class Auth:
    """``/v1/*`` needs ``Authorization: Bearer <key>``; otherwise 401 with WWW-Authenticate."""

    def __init__(self, app: Any, api_key: str) -> None:
        self.app, self.key = app, api_key.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not _is_api(scope):
            await self.app(scope, receive, send)
            return
        given = b""
        headers = [v for n, v in scope.get("headers", ()) if n == b"authorization"]
        if len(headers) == 1:
            scheme, _, token = headers[0].strip().partition(b" ")
            given = token.strip() if scheme.lower() == b"bearer" else b""
        if given and hmac.compare_digest(given, self.key):
            await self.app(scope, receive, send)
            return
        if len(headers) > 1:
            message = "Send one Authorization header, not several."
        elif given:
            message = f"The API key is wrong: {WHERE_THE_KEY_IS}."
        elif headers:
            message = f"The Authorization header must read 'Bearer YOUR_KEY' ({WHERE_THE_KEY_IS})."
        else:
            message = (
                "No API key: send it in an Authorization header as 'Bearer YOUR_KEY' "
                f"({WHERE_THE_KEY_IS})."
            )
        error = ApiError(
            401, message, code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"}
        )
        record = scope.get(RECORD)
        if isinstance(record, ServedRecord):
            record.error = message
        await _send_error(send, error)


class BodyCap:
    """413 for a body over ``limit`` bytes: by its Content-Length, or counted as it comes."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    def error(self) -> ApiError:
        return ApiError(
            413,
            f"The request body is larger than this server's limit of {self.limit} bytes.",
            code="request_too_large",
        )

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                error = self.error()
                record = scope.get(RECORD)
                if isinstance(record, ServedRecord):
                    record.error = error.message
                await _send_error(send, error)
                return
        seen = 0

        async def counted() -> dict[str, Any]:
            nonlocal seen
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise self.error()  # inside the route: its ApiError handler answers
            return message

        await self.app(scope, counted, send)


def wrap(
    app: Any,
    api_key: str,
    max_body_bytes: int,
    cors_origins: Sequence[str],
    on_served: Callable[[], None],
) -> Any:
    """The guards around ``app`` (the routes), innermost first."""
    guarded: Any = Auth(BodyCap(app, max_body_bytes), api_key)
    if cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        guarded = CORSMiddleware(
            guarded,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    return Accounting(guarded, on_served)
