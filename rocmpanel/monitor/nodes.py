"""Other machines' GPUs, read from their Prometheus pages: nodes, polls, states, the list.

A node is a URL (AMD's GPU metrics exporter, or another rocmpanel's ``telemetry
--prometheus``), an optional API key and a name. :func:`poll` fetches its page once
(urllib; http and https only; 3 s to connect and 3 s in all to read; at most
:data:`~rocmpanel.monitor.prometheus_read.MAX_PAGE_BYTES`; no redirect to another host;
no proxy, since nodes are on the user's own network) and never raises: a
:class:`PollResult` holds the reading or a :class:`PollError` whose message says what went
wrong in words. :class:`RemoteNode` turns each result into samples for its own
:class:`TelemetryHistory` and :class:`AlertMonitor` (the ones local GPUs use) and keeps its
state: up, or down since when and why.

The node list is ``<config>/nodes.json``: written atomically with mode 0600 (it holds the
keys, which are secrets), backed up first, under the store lock; a file that cannot be
read is kept aside (``nodes.json.bad-<time>``) and the list starts empty.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.files import CONFIG_LIMIT, read_bytes
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.locking import locked
from rocmpanel.base.units import KIB, MIB
from rocmpanel.monitor.alerts import Alert, AlertMonitor, AlertRules
from rocmpanel.monitor.history import TelemetryHistory
from rocmpanel.monitor.prometheus_read import (
    MAX_PAGE_BYTES,
    PageError,
    PageProblem,
    PageReading,
    RemoteGpu,
    read_page,
    with_node,
)
from rocmpanel.monitor.sample import Sample

TIMEOUT_S = 3.0
POLL_INTERVAL_S = 5.0
NODES_FILE = "nodes.json"
SCHEMA = 1
BACKUPS_KEEP = 5
MAX_NODES = 256
NAME_MAX = 64
REFUSED = QT_TRANSLATE_NOOP("nodes", "The node list was not saved")
# Full-resolution rows per GPU (an hour at 1 s, five at the default 5 s), then 10 s buckets.
HISTORY_ROWS = 3600


class Problem(Enum):
    REFUSED = "refused"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    NEEDS_KEY = "needs key"
    HTTP = "http status"
    TLS = "tls"
    REDIRECT = "redirect"
    TOO_LARGE = "too large"
    NOT_PROMETHEUS = "not prometheus"
    NO_GPU_METRICS = "no gpu metrics"


class PollError(PanelError):
    """Why a node could not be read; ``kind`` for code, ``message`` for people."""

    def __init__(self, kind: Problem, message: str, detail: str = "") -> None:
        super().__init__(message, detail)
        self.kind = kind


@dataclass(frozen=True)
class NodeSpec:
    """What the user entered: the page's URL, its name in the panel, the key (or None)."""

    name: str
    url: str
    key: str | None = None


def check_url(text: str) -> str:
    """The URL to poll, cleaned (``/metrics`` when no path is given); PanelError with the
    reason otherwise."""
    value = text.strip()
    if "://" not in value:
        value = "http://" + value
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise PanelError(
            translate("nodes", "{url} is not a URL: {error}.").format(url=repr(text), error=exc)
        ) from exc
    if parts.scheme not in ("http", "https"):
        raise PanelError(
            translate("nodes", "{url} is not an http:// or https:// URL.").format(url=repr(text))
        )
    if not parts.hostname:
        raise PanelError(
            translate(
                "nodes", "{url} names no host; give one, as in http://node1:5000/metrics."
            ).format(url=repr(text))
        )
    if parts.username or parts.password:
        raise PanelError(translate("nodes", "Put the key in the key field, not in the URL."))
    if port == 0:
        raise PanelError(
            translate("nodes", "{url}: port 0 cannot be reached.").format(url=repr(text))
        )
    path = parts.path or "/metrics"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def check_name(text: str, url: str) -> str:
    """The node's name: the one given, else the URL's host."""
    name = " ".join(text.split())[:NAME_MAX]
    return name or (urllib.parse.urlsplit(url).hostname or url)


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the same scheme, host and port (the key must not travel
    elsewhere)."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if (old.scheme, old.netloc) != (new.scheme, new.netloc):
            fp.close()  # urllib closes it only when it follows the redirect
            raise PollError(
                Problem.REDIRECT,
                translate(
                    "nodes",
                    "The node redirects to another address ({address}); give that address instead.",
                ).format(address=f"{new.scheme}://{new.netloc}"),
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _SameHostRedirects())


def fetch(url: str, key: str | None = None, timeout: float = TIMEOUT_S) -> bytes:
    """The page at ``url``, at most MAX_PAGE_BYTES, read within ``timeout`` seconds after
    connecting; PollError otherwise."""
    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > MAX_PAGE_BYTES:
                raise _too_large()
            return _read_within(response, time.monotonic() + timeout)
    except PollError:
        raise
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the connection's socket
        raise _http_error(exc.code, key) from exc
    except urllib.error.URLError as exc:
        raise _network_error(exc.reason, url) from exc
    except (OSError, ValueError, http.client.HTTPException) as exc:  # reset, bad status line
        raise _network_error(exc, url) from exc


def _read_within(response: Any, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise PollError(
                Problem.TIMEOUT,
                translate("nodes", "The node sends its page too slowly (timed out)."),
            )
        chunk = response.read(64 * KIB)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_PAGE_BYTES:
            raise _too_large()
        chunks.append(chunk)


def _too_large() -> PollError:
    return PollError(
        Problem.TOO_LARGE,
        translate(
            "nodes",
            "The page is larger than {size} MiB; a GPU metrics page is far smaller, so this "
            "is not one.",
        ).format(size=MAX_PAGE_BYTES // MIB),
    )


def _http_error(code: int, key: str | None) -> PollError:
    if code in (401, 403):
        if key:
            return PollError(
                Problem.NEEDS_KEY,
                translate("nodes", "The node refused the key (HTTP {code}).").format(code=code),
            )
        return PollError(
            Problem.NEEDS_KEY,
            translate("nodes", "The node needs its API key (HTTP {code}).").format(code=code),
        )
    if code == 404:
        return PollError(
            Problem.HTTP,
            translate(
                "nodes", "Nothing at that path (HTTP 404): the metrics are usually at /metrics."
            ),
        )
    return PollError(
        Problem.HTTP, translate("nodes", "The node answered HTTP {code}.").format(code=code)
    )


def _network_error(reason: object, url: str) -> PollError:
    host = urllib.parse.urlsplit(url).netloc
    detail = f"{type(reason).__name__}: {reason}"
    if isinstance(reason, ConnectionRefusedError):
        return PollError(
            Problem.REFUSED,
            translate(
                "nodes", "{host} refused the connection (nothing listens on that port)."
            ).format(host=host),
            detail,
        )
    if isinstance(reason, TimeoutError | socket.timeout):
        message = translate("nodes", "{host} did not answer within {seconds} s.")
        return PollError(
            Problem.TIMEOUT, message.format(host=host, seconds=f"{TIMEOUT_S:g}"), detail
        )
    if isinstance(reason, socket.gaierror):
        message = translate("nodes", "The host name in {host} is not known.")
        return PollError(Problem.UNREACHABLE, message.format(host=host), detail)
    if isinstance(reason, ssl.SSLError):
        message = translate("nodes", "The TLS connection to {host} failed ({error}).")
        return PollError(Problem.TLS, message.format(host=host, error=reason), detail)
    if isinstance(reason, OSError) and reason.strerror:
        message = translate("nodes", "{host} cannot be reached ({error}).")
        return PollError(
            Problem.UNREACHABLE, message.format(host=host, error=reason.strerror), detail
        )
    message = translate("nodes", "{host} cannot be read ({error}).")
    return PollError(Problem.UNREACHABLE, message.format(host=host, error=reason), detail)


@dataclass(frozen=True)
class PollResult:
    """One poll: when, how long it took, and the reading or the error."""

    spec: NodeSpec
    t: float
    elapsed_s: float
    reading: PageReading | None = None
    error: PollError | None = None


_PAGE_KINDS = {
    PageProblem.TOO_LARGE: Problem.TOO_LARGE,
    PageProblem.NO_GPU_METRICS: Problem.NO_GPU_METRICS,
}


def poll(spec: NodeSpec, timeout: float = TIMEOUT_S) -> PollResult:
    """Fetch and read ``spec``'s page once; never raises."""
    started = time.monotonic()
    t = time.time()
    try:
        reading = read_page(fetch(spec.url, spec.key, timeout))
    except PageError as exc:
        kind = _PAGE_KINDS.get(exc.kind, Problem.NOT_PROMETHEUS)
        error = PollError(kind, exc.message, exc.detail)
        return PollResult(spec, t, time.monotonic() - started, error=error)
    except PollError as exc:
        return PollResult(spec, t, time.monotonic() - started, error=exc)
    except Exception as exc:  # a bug must not stop the other nodes' polls
        message = translate("nodes", "Reading the node failed: {error}").format(error=exc)
        error = PollError(Problem.UNREACHABLE, message, repr(exc))
        return PollResult(spec, t, time.monotonic() - started, error=error)
    return PollResult(spec, t, time.monotonic() - started, reading=reading)


def poll_all(specs: Sequence[NodeSpec], timeout: float = TIMEOUT_S) -> tuple[PollResult, ...]:
    """Every node at once (one thread each, at most 16): the slowest sets the time."""
    if not specs:
        return ()
    with ThreadPoolExecutor(max_workers=min(16, len(specs)), thread_name_prefix="node") as pool:
        return tuple(pool.map(lambda s: poll(s, timeout), specs))


class NodeState(Enum):
    WAITING = "waiting"
    UP = "up"
    DOWN = "down"


@dataclass(frozen=True)
class NodeStatus:
    """``since``: when the node went up or down (Unix s); ``error``: why it is down."""

    state: NodeState = NodeState.WAITING
    since: float | None = None
    error: str = ""
    source: str = ""

    def text(self) -> str:
        if self.state is NodeState.WAITING:
            return translate("NodeStatus", "waiting for the first answer")
        if self.state is NodeState.UP:
            if self.source:
                return translate("NodeStatus", "up ({source})").format(source=self.source)
            return translate("NodeStatus", "up")
        stamp = time.strftime("%H:%M:%S", time.localtime(self.since)) if self.since else "?"
        return translate("NodeStatus", "down since {time}: {error}").format(
            time=stamp, error=self.error
        )


@dataclass
class RemoteNode:
    """One node's history, alerts and state; fed with :meth:`apply` on one thread."""

    spec: NodeSpec
    rules: AlertRules = field(default_factory=AlertRules)
    status: NodeStatus = field(default_factory=NodeStatus)
    gpus: tuple[RemoteGpu, ...] = ()
    history: TelemetryHistory = field(init=False)
    alerts: AlertMonitor = field(init=False)

    def __post_init__(self) -> None:
        self.history = TelemetryHistory(full_capacity=HISTORY_ROWS)
        self.alerts = AlertMonitor(self.rules)

    def apply(self, result: PollResult) -> list[Alert]:
        """Take one poll's result; the alerts that fire now."""
        if result.reading is None:
            error = result.error.message if result.error else translate("RemoteNode", "no answer")
            since = self.status.since if self.status.state is NodeState.DOWN else result.t
            self.status = NodeStatus(NodeState.DOWN, since, error)
            return []
        reading = result.reading
        many = len(reading.hosts) > 1
        self.gpus = tuple(with_node(g, self.spec.name, many) for g in reading.gpus)
        since = self.status.since if self.status.state is NodeState.UP else result.t
        self.status = NodeStatus(NodeState.UP, since, "", reading.source)
        sample = Sample(result.t, tuple(g.sample for g in self.gpus), None)
        self.history.add(sample)
        self.alerts.rules = self.rules
        return self.alerts.check(sample)


# -- the saved list -----------------------------------------------------------------------
@dataclass(frozen=True)
class LoadedNodes:
    specs: tuple[NodeSpec, ...]
    note: str = ""  # what was kept aside, when something was


def nodes_file() -> Path:
    return paths.config_dir() / NODES_FILE


def _parse(data: bytes) -> tuple[NodeSpec, ...]:
    document = json.loads(data.decode("utf-8"))
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise ValueError('no "nodes" list')
    specs = []
    for entry in document["nodes"][:MAX_NODES]:
        if not isinstance(entry, dict):
            raise ValueError("a node is not an object")
        url = check_url(str(entry.get("url", "")))
        key = entry.get("key")
        if key is not None and not isinstance(key, str):
            raise ValueError("a key is not text")
        specs.append(NodeSpec(check_name(str(entry.get("name", "")), url), url, key or None))
    return tuple(specs)


def load_nodes(path: Path | None = None) -> LoadedNodes:
    """The saved nodes; a file that cannot be read is kept aside and the list is empty."""
    path = path or nodes_file()
    try:
        data = read_bytes(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return LoadedNodes(())
    except OSError as exc:
        return LoadedNodes((), _keep_aside(path, str(exc)))
    try:
        return LoadedNodes(_parse(data))
    except (ValueError, UnicodeDecodeError, PanelError) as exc:
        return LoadedNodes((), _keep_aside(path, str(exc)))


def _keep_aside(path: Path, why: str) -> str:
    target = paths.aside(path, "bad")
    try:
        os.replace(path, target)
    except OSError as exc:
        return translate(
            "nodes", "The node list {path} cannot be read ({why}) nor moved aside ({error})."
        ).format(path=path, why=why, error=exc)
    return translate(
        "nodes", "The node list {path} could not be read ({why}); it was kept as {name}."
    ).format(path=path, why=why, name=target.name)


def save_nodes(specs: Sequence[NodeSpec], path: Path | None = None) -> Path:
    """Write the list (mode 0600: it holds the keys), backing up the old one first."""
    path = path or nodes_file()
    document = {
        "schema": SCHEMA,
        "nodes": [{"name": s.name, "url": s.url, "key": s.key} for s in specs[:MAX_NODES]],
    }
    data = (json.dumps(document, indent=2) + "\n").encode("utf-8")
    with locked(path, refused=translate("nodes", REFUSED)):
        backup_file(path, paths.backups_dir(), BACKUPS_KEEP)
        write_atomic(path, data, mode=0o600, follow_symlinks=False)
    return path
