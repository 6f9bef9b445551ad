"""rocmpanel's own telemetry as a Prometheus page, and the small HTTP server that serves it.

The metrics are ``rocmpanel_gpu_<figure>_<unit>`` (names and units in
:data:`rocmpanel.monitor.prometheus_read.OWN_METRICS`, the one table both directions use),
labelled ``gpu`` (index in the sample), ``bdf`` (PCI address, "" when unknown), ``name``
and ``host``, from the newest :class:`Sample` given to :meth:`OwnCollector.update`. A
figure a GPU does not report is left out, not written as 0. ``rocmpanel_gpu_info`` (always
1) carries what is text in its labels: ``gfx``, ``link`` and ``perf_level``.

The server is off unless the user asks (``rocmpanel telemetry --prometheus``), listens on
127.0.0.1 unless told otherwise, answers ``GET /metrics`` only (404 elsewhere, 405 for other
methods) and, with a key, only requests that carry ``Authorization: Bearer <key>`` (the
comparison takes the same time whatever the key: :func:`hmac.compare_digest`). It is
prometheus_client's WSGI app served by :mod:`wsgiref` on one thread of its own.
"""

from __future__ import annotations

import hmac
import logging
import os
import socket
import socketserver
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from rocmpanel.base.errors import PanelError
from rocmpanel.monitor.prometheus_read import (
    OWN_ASLEEP,
    OWN_INFO,
    OWN_INFO_LABELS,
    OWN_LABELS,
    OWN_METRICS,
    OWN_PREFIX,
)
from rocmpanel.monitor.sample import Sample

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9400
PATH = "/metrics"
REQUEST_TIMEOUT_S = 10.0  # a client that stops sending gives its thread back after this
MAX_CONNECTIONS = 16  # connections served at once; more are closed (see _Threaded)

StartResponse = Callable[..., Any]


class OwnCollector(Collector):
    """Turns the newest Sample into gauge families; ``update`` may be called from any
    thread while the server thread collects."""

    def __init__(self, host: str | None = None) -> None:
        self.host = host if host is not None else socket.gethostname()
        self._lock = threading.Lock()
        self._sample: Sample | None = None

    def update(self, sample: Sample) -> None:
        with self._lock:
            self._sample = sample

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            sample = self._sample
        if sample is None:
            return []
        families: list[Metric] = []
        asleep = GaugeMetricFamily(
            OWN_PREFIX + OWN_ASLEEP,
            "1 while the GPU is runtime-suspended (only memory figures are read then)",
            labels=OWN_LABELS,
        )
        rows = [
            ((str(i), g.identity.pci_slot or "", g.identity.name, self.host), g)
            for i, g in enumerate(sample.gpus)
        ]
        info = GaugeMetricFamily(
            OWN_PREFIX + OWN_INFO,
            "always 1; the labels carry the gfx target, PCIe link and performance level",
            labels=(*OWN_LABELS, *OWN_INFO_LABELS),
        )
        for labels, gpu in rows:
            asleep.add_metric(labels, 1.0 if gpu.asleep else 0.0)
            texts = (gpu.identity.gfx or "", gpu.link or "", gpu.perf_level or "")
            info.add_metric((*labels, *texts), 1.0)
        families += [asleep, info]
        for metric, attr, scale, help_text in OWN_METRICS:
            family = GaugeMetricFamily(OWN_PREFIX + metric, help_text, labels=OWN_LABELS)
            for labels, gpu in rows:
                value = getattr(gpu, attr)
                if value is not None:
                    family.add_metric(labels, float(value) * scale)
            families.append(family)
        return families


def registry_for(collector: OwnCollector) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def page(sample: Sample, host: str | None = None) -> bytes:
    """The text page of ``sample`` (what a scrape gets)."""
    from prometheus_client.exposition import generate_latest

    collector = OwnCollector(host)
    collector.update(sample)
    return generate_latest(registry_for(collector))


def bearer_ok(header: str | None, key: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``key`` (always True without a key)."""
    if key is None:
        return True
    if not header:
        return False
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), key.encode("utf-8"))


def metrics_app(registry: CollectorRegistry, key: str | None) -> Callable[..., Iterable[bytes]]:
    """The WSGI app: GET /metrics behind the key, nothing else."""
    from prometheus_client.exposition import make_wsgi_app

    inner = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        method = environ.get("REQUEST_METHOD", "GET")
        if path.rstrip("/") != PATH:
            return _plain(start_response, "404 Not Found", f"Nothing here: see {PATH}\n")
        if method not in ("GET", "HEAD"):
            return _plain(start_response, "405 Method Not Allowed", "Only GET is served.\n",
                          [("Allow", "GET, HEAD")])  # fmt: skip
        if not bearer_ok(environ.get("HTTP_AUTHORIZATION"), key):
            return _plain(
                start_response,
                "401 Unauthorized",
                "This page needs the API key: send 'Authorization: Bearer <key>'.\n",
                [("WWW-Authenticate", 'Bearer realm="rocmpanel telemetry"')],
            )
        # Only the default page: no ?name[]= filtering, no OpenMetrics negotiation needed.
        environ = dict(environ, QUERY_STRING="")
        return inner(environ, start_response)  # type: ignore[no-any-return]

    return app


def _plain(
    start_response: StartResponse,
    status: str,
    text: str,
    headers: list[tuple[str, str]] | None = None,
) -> list[bytes]:
    body = text.encode("utf-8")
    start_response(
        status,
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
        + (headers or []),
    )
    return [body]


class _QuietHandler(WSGIRequestHandler):
    """Requests go to the log at debug level, not to standard error."""

    timeout = REQUEST_TIMEOUT_S

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


class _Threaded(socketserver.ThreadingMixIn, WSGIServer):
    """One thread per connection, at most :data:`MAX_CONNECTIONS` at once (more are closed
    at once), so a client that connects and sends nothing cannot stall Prometheus's
    scrapes: it only holds its own thread until the request timeout."""

    daemon_threads = True
    block_on_close = False
    # On Windows SO_REUSEADDR lets another program bind the same port and take requests:
    # only POSIX gets it (there it only allows a port still in TIME_WAIT).
    allow_reuse_address = os.name == "posix"
    _slots: threading.BoundedSemaphore | None = None

    def process_request(self, request: Any, client_address: Any) -> None:
        if self._slots is None:
            self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            if self._slots is not None:
                self._slots.release()


class _Server4(_Threaded):
    address_family = socket.AF_INET


class _Server6(_Threaded):
    address_family = socket.AF_INET6


class MetricsServer:
    """``GET /metrics`` on ``host``:``port`` in a thread of its own; ``close`` stops it."""

    def __init__(
        self, registry: CollectorRegistry, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
        *, key: str | None = None,
    ) -> None:  # fmt: skip
        bare = host.strip().strip("[]")
        server_class = _Server6 if ":" in bare else _Server4
        try:
            self._server = make_server(
                bare, port, metrics_app(registry, key), server_class, _QuietHandler
            )
        except OSError as exc:
            raise PanelError(listen_problem(host, port, exc), str(exc)) from exc
        self.host = host
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
            name="prometheus-telemetry", daemon=True,
        )  # fmt: skip
        self._thread.start()

    @property
    def url(self) -> str:
        shown = f"[{self.host.strip('[]')}]" if ":" in self.host.strip("[]") else self.host
        return f"http://{shown}:{self.port}{PATH}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def listen_problem(host: str, port: int, exc: OSError) -> str:
    """One sentence for a failed bind, with what to do."""
    if exc.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
        return (
            f"Port {port} on {host} is already in use by another program: choose another "
            "port, as in --prometheus 127.0.0.1:9401 (port 0 picks a free one)."
        )
    if exc.errno in (13, 10013):  # EACCES
        return f"Not allowed to listen on port {port} (ports below 1024 need root): use another."
    if exc.errno in (99, 49, 10049, -2, -3, -5):  # EADDRNOTAVAIL, or a name not resolved
        return f"{host} is not an address of this machine: use 127.0.0.1 or one of its own."
    return f"Cannot listen on {host}:{port} ({exc.strerror or exc})."
