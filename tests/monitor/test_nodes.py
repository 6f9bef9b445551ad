"""Polling other nodes over HTTP: pages served on 127.0.0.1 by http.server in a thread (up,
refused, 401, garbage, no GPU metrics, too slow, too large, redirects); node states, history
and alerts; the saved node list.

The exporter page is written from the exporter's documented names (see
test_prometheus_read.py), not captured from a running exporter.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.base.units import MIB
from rocmpanel.monitor.alerts import AlertKind, AlertRules
from rocmpanel.monitor.nodes import (
    NodeSpec,
    NodeState,
    Problem,
    RemoteNode,
    check_url,
    load_nodes,
    poll,
    save_nodes,
)
from rocmpanel.monitor.prometheus_export import page
from rocmpanel.monitor.prometheus_read import MAX_PAGE_BYTES
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample
from rocmpanel.shell.cli import main

LABELS = (
    'card_model="102-G30211-0C",card_series="AMD Instinct MI300X OAM",gpu_id="{gpu}",'
    'gpu_partition_id="0",hostname="node-a",serial_number="69240900540{gpu}"'
)


def exporter_page(used_mb: int = 1024, total_mb: int = 196592) -> bytes:
    lines = []
    for name, values in (
        ("gpu_gfx_activity", (37, 3)),
        ("gpu_used_vram", (used_mb, 10)),
        ("gpu_total_vram", (total_mb, total_mb)),
        ("gpu_junction_temperature", (60, 41)),
        ("gpu_power_usage", (350, 130)),
        ("gpu_ecc_correct_total", (3, 0)),
        ("gpu_ecc_uncorrect_total", (0, 0)),
    ):
        lines.append(f"# TYPE {name} gauge")
        lines += [f"{name}{{{LABELS.format(gpu=i)}}} {v}" for i, v in enumerate(values)]
    return ("\n".join(lines) + "\n").encode()


Route = Callable[[BaseHTTPRequestHandler], None]


class Served:
    """A tiny HTTP server whose answer the test sets (``route``)."""

    def __init__(self) -> None:
        self.route: Route = lambda h: send(h, 200, exporter_page())
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                served.route(self)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, **headers: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain; version=0.0.4")
    if "Content-Length" not in headers:
        handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def served() -> Iterator[Served]:
    server = Served()
    yield server
    server.close()


def test_an_exporter_node_is_up_with_its_gpus(served: Served) -> None:
    result = poll(NodeSpec("n1", served.url))
    assert result.error is None and result.reading is not None
    node = RemoteNode(NodeSpec("n1", served.url))
    node.apply(result)
    assert node.status.state is NodeState.UP and node.status.text().startswith("up (AMD")
    assert [g.sample.identity.key for g in node.gpus] == ["n1/gpu0", "n1/gpu1"]
    assert node.gpus[0].sample.vram_used_bytes == 1024 * MIB
    assert node.gpus[0].sample.identity.name == "AMD Instinct MI300X OAM (GPU 0) on n1"
    history = node.history.gpus["n1/gpu0"]
    window = history.window(result.t - 1, result.t + 1)
    assert window.series("busy_percent").tolist() == [37.0]
    assert window.series("vram_used_mib").tolist() == [1024.0]


def test_alerts_use_the_local_rules(served: Served) -> None:
    served.route = lambda h: send(h, 200, exporter_page(used_mb=190000, total_mb=196592))
    node = RemoteNode(NodeSpec("n1", served.url), AlertRules(vram_hold_s=0.0))
    alerts = node.apply(poll(node.spec))
    assert [a.kind for a in alerts] == [AlertKind.VRAM]
    assert alerts[0].gpu_key == "n1/gpu0"
    assert "on n1: VRAM 97 % full" in alerts[0].message


def test_refused_then_down_since_the_first_failure(served: Served) -> None:
    url = served.url
    served.close()
    node = RemoteNode(NodeSpec("gone", url))
    first = poll(node.spec)
    assert first.error is not None and first.error.kind is Problem.REFUSED
    assert "refused the connection" in first.error.message
    node.apply(first)
    since = node.status.since
    node.apply(poll(node.spec))
    assert node.status.state is NodeState.DOWN and node.status.since == since
    assert node.status.text().startswith("down since ") and "refused" in node.status.text()


def test_a_node_that_needs_its_key(served: Served) -> None:
    key = "rp-node-key-0123456789abcdef"

    def guarded(h: BaseHTTPRequestHandler) -> None:
        if h.headers.get("Authorization") == f"Bearer {key}":
            send(h, 200, exporter_page())
        else:
            send(h, 401, b"needs key", **{"WWW-Authenticate": "Bearer"})

    served.route = guarded
    without = poll(NodeSpec("n", served.url))
    assert without.error is not None and without.error.kind is Problem.NEEDS_KEY
    assert without.error.message == "The node needs its API key (HTTP 401)."
    wrong = poll(NodeSpec("n", served.url, "rp-other-0123456789abcdef"))
    assert wrong.error is not None and "refused the key" in wrong.error.message
    right = poll(NodeSpec("n", served.url, key))
    assert right.reading is not None and len(right.reading.gpus) == 2


@pytest.mark.parametrize(
    ("body", "kind", "words"),
    [
        (b"<html><body>Grafana login</body></html>", Problem.NOT_PROMETHEUS, "HTML"),
        (b"# TYPE up gauge\nup 1\n", Problem.NO_GPU_METRICS, "no GPU metrics"),
    ],
)
def test_pages_that_are_not_gpu_metrics(
    served: Served, body: bytes, kind: Problem, words: str
) -> None:
    served.route = lambda h: send(h, 200, body)
    result = poll(NodeSpec("n", served.url))
    assert result.error is not None and result.error.kind is kind
    assert words in result.error.message


def test_http_errors_are_named(served: Served) -> None:
    served.route = lambda h: send(h, 404, b"no")
    result = poll(NodeSpec("n", served.url))
    assert result.error is not None and "HTTP 404" in result.error.message


def test_a_slow_node_times_out(served: Served) -> None:
    release = threading.Event()

    def slow(h: BaseHTTPRequestHandler) -> None:
        release.wait(5)
        send(h, 200, exporter_page())

    served.route = slow
    started = time.monotonic()
    result = poll(NodeSpec("n", served.url), timeout=0.5)
    release.set()
    assert time.monotonic() - started < 3
    assert result.error is not None and result.error.kind is Problem.TIMEOUT


def test_a_page_that_trickles_times_out(served: Served) -> None:
    def trickle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.end_headers()
        try:
            for _ in range(40):
                h.wfile.write(b"# comment\n")
                h.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass

    served.route = trickle
    result = poll(NodeSpec("n", served.url), timeout=0.5)
    assert result.error is not None and result.error.kind is Problem.TIMEOUT


def test_a_huge_page_is_refused(served: Served) -> None:
    served.route = lambda h: send(h, 200, b"", **{"Content-Length": str(MAX_PAGE_BYTES + 1)})
    declared = poll(NodeSpec("n", served.url))
    assert declared.error is not None and declared.error.kind is Problem.TOO_LARGE

    def unbounded(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.end_headers()  # no Content-Length: read until the connection closes
        try:
            for _ in range(MAX_PAGE_BYTES // (1024 * 1024) + 2):
                h.wfile.write(b"#" * (1024 * 1024))
        except OSError:
            pass
        h.close_connection = True

    served.route = unbounded
    streamed = poll(NodeSpec("n", served.url))
    assert streamed.error is not None and streamed.error.kind is Problem.TOO_LARGE
    assert "MiB" in streamed.error.message


def test_redirects_stay_on_the_same_host(served: Served) -> None:
    def route(h: BaseHTTPRequestHandler) -> None:
        if h.path == "/old":
            send(h, 302, b"", Location=f"http://127.0.0.1:{served.port}/metrics")
        elif h.path == "/away":
            send(h, 302, b"", Location="http://192.0.2.1:5000/metrics")
        else:
            send(h, 200, exporter_page())

    served.route = route
    moved = poll(NodeSpec("n", f"http://127.0.0.1:{served.port}/old"))
    assert moved.reading is not None
    away = poll(NodeSpec("n", f"http://127.0.0.1:{served.port}/away"))
    assert away.error is not None and away.error.kind is Problem.REDIRECT
    assert "192.0.2.1:5000" in away.error.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("node1:5000", "http://node1:5000/metrics"),
        ("https://gpu.example.org/metrics", "https://gpu.example.org/metrics"),
        (" http://10.0.0.5:9400/custom ", "http://10.0.0.5:9400/custom"),
    ],
)
def test_urls_are_cleaned(text: str, expected: str) -> None:
    assert check_url(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ftp://node1/metrics", "http"),
        ("http://:5000/metrics", "no host"),
        ("http://user:pw@node1:5000/", "key field"),
        ("http://node1:99999/", "not a URL"),
    ],
)
def test_bad_urls_say_why(text: str, words: str) -> None:
    with pytest.raises(PanelError, match=words):
        check_url(text)


def test_the_list_round_trips_privately_with_a_backup() -> None:
    specs = [NodeSpec("a", "http://a:5000/metrics", "rp-key-0123456789abcdef"),
             NodeSpec("b", "http://b:9400/metrics")]  # fmt: skip
    path = save_nodes(specs)
    assert path == paths.config_dir() / "nodes.json"
    assert load_nodes().specs == tuple(specs)
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    save_nodes(specs[:1])
    assert load_nodes().specs == tuple(specs[:1])
    backups = list(paths.backups_dir().glob("*nodes.json*.bak"))
    assert len(backups) == 1 and json.loads(backups[0].read_text())["nodes"][1]["name"] == "b"


def test_a_damaged_list_is_kept_aside(tmp_path: Path) -> None:
    path = paths.config_dir() / "nodes.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"nodes": [{"url": "ftp://x"}]}')
    loaded = load_nodes()
    assert loaded.specs == () and "could not be read" in loaded.note
    kept = list(path.parent.glob("nodes.json.bad-*"))
    assert len(kept) == 1 and kept[0].read_text() == '{"nodes": [{"url": "ftp://x"}]}'
    assert not path.exists()


# -- rocmpanel telemetry --node ------------------------------------------------------------
def needs_key(key: str) -> Route:
    def guarded(h: BaseHTTPRequestHandler) -> None:
        if h.headers.get("Authorization") == f"Bearer {key}":
            send(h, 200, exporter_page())
        else:
            send(h, 401, b"needs key", **{"WWW-Authenticate": "Bearer"})

    return guarded


def test_node_cli_says_how_to_give_the_key(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "rp-node-key-0123456789abcdef"
    served.route = needs_key(key)
    assert main(["telemetry", "--node", served.url]) == 1
    err = capsys.readouterr().err
    assert "needs its API key (HTTP 401). Give it with --key-file FILE" in err
    wrong = tmp_path / "wrong.key"
    wrong.write_text("rp-other-0123456789abcdef\n")
    assert main(["telemetry", "--node", served.url, "--key-file", str(wrong)]) == 1
    assert f"Check that {wrong} holds the node's current key." in capsys.readouterr().err
    right = tmp_path / "right.key"
    right.write_text(key + "\n")
    assert main(["telemetry", "--node", served.url, "--key-file", str(right)]) == 0
    assert "2 GPU(s)" in capsys.readouterr().out


def test_node_cli_prints_a_rocmpanel_node_once_and_without_na(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    ident = GpuIdentity("0000:0c:00.0", "card0", "0000:0c:00.0", "1002:73bf", "RX 6800", "gfx1030")
    gpu = GpuSample(ident, False, busy_percent=3.0, vram_used_bytes=1 << 30,
                    vram_total_bytes=16 << 30, temp_edge_c=56.0, power_w=36.0,
                    power_cap_w=289.0, link="16.0 GT/s x16", perf_level="auto")  # fmt: skip
    body = page(Sample(1.0, (gpu,), None), host="box2")
    served.route = lambda h: send(h, 200, body)
    assert main(["telemetry", "--node", served.url]) == 0
    out = capsys.readouterr().out
    assert out.count("0000:0c:00.0") == 1  # the PCI address once, not twice
    assert "0000:0c:00.0  RX 6800  gfx1030  host box2" in out
    assert "link 16.0 GT/s x16   perf level auto" in out
    assert "power 36.0 W / cap 289 W" in out
    assert "n/a" not in out  # what the page does not carry (fan, GTT, clocks) is left out
    assert "fan" not in out and "GTT" not in out and "sclk" not in out


def test_node_cli_prints_an_exporter_node_without_na(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["telemetry", "--node", served.url]) == 0
    out = capsys.readouterr().out
    assert "gpu0  AMD Instinct MI300X OAM (GPU 0)  host node-a" in out
    assert "ECC errors: 3 corrected, 0 uncorrected" in out
    assert "n/a" not in out and "link" not in out and "perf level" not in out
