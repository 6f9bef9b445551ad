"""rocmpanel's own Prometheus page and server: our page read back by our reader gives the same
figures; the server answers GET /metrics only, behind the key, on 127.0.0.1 by default; and a
real ``rocmpanel telemetry --prometheus`` process is scraped, then stopped with SIGTERM."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.base.units import GIB
from rocmpanel.monitor.prometheus_cli import listen_address
from rocmpanel.monitor.prometheus_export import (
    DEFAULT_HOST,
    MetricsServer,
    OwnCollector,
    bearer_ok,
    page,
    registry_for,
)
from rocmpanel.monitor.prometheus_read import OWN_METRICS, read_page
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample
from rocmpanel.shell.cli import main

KEY = "rp-test-key-0123456789abcdef"


def full_gpu(slot: str, name: str, busy: float) -> GpuSample:
    ident = GpuIdentity(slot, "card0", slot, "1002:744c", name, "gfx1100")
    return GpuSample(
        ident, False, busy_percent=busy, mem_busy_percent=7.5, vram_used_bytes=3 * GIB + 17,
        vram_total_bytes=24 * GIB, gtt_used_bytes=12345678, gtt_total_bytes=64 * GIB,
        temp_edge_c=51.0, temp_junction_c=63.5, temp_mem_c=70.0, crit_edge_c=100.0,
        crit_junction_c=110.0, crit_mem_c=105.0, power_w=212.25, power_cap_w=327.0,
        sclk_mhz=2482.0, mclk_mhz=1249.0, fan_rpm=1650, fan_percent=38.0,
        link="16.0 GT/s x16", perf_level="auto",
    )  # fmt: skip


def sample() -> Sample:
    return Sample(
        1700000000.0,
        (
            full_gpu("0000:03:00.0", "Radeon RX 7900 XTX", 42.0),
            full_gpu("0000:0c:00.0", 'Radeon "PRO" W7900\\x', 99.0),
        ),
        None,
    )


def test_round_trip_gives_the_same_figures() -> None:
    original = sample()
    reading = read_page(page(original, host="box"))
    assert reading.source == "rocmpanel" and reading.hosts == ("box",)
    assert len(reading.gpus) == 2
    for before, after in zip(original.gpus, reading.gpus, strict=True):
        assert after.sample.identity.key == before.identity.pci_slot
        assert after.sample.identity.name == before.identity.name  # quotes and backslash kept
        for _, attr, _, _ in OWN_METRICS:
            assert getattr(after.sample, attr) == getattr(before, attr), attr
        assert after.sample.asleep is False
        # what is text travels in rocmpanel_gpu_info's labels (a node's header shows it)
        assert after.sample.identity.gfx == "gfx1100"
        assert (after.sample.link, after.sample.perf_level) == ("16.0 GT/s x16", "auto")


def test_unknown_text_is_an_empty_label_and_reads_as_none() -> None:
    gpu = sample().gpus[0]
    bare = dataclasses.replace(gpu, identity=dataclasses.replace(gpu.identity, gfx=None),
                               link=None, perf_level=None)  # fmt: skip
    text = page(Sample(1.0, (bare,), None), host="box").decode()
    info = next(x for x in text.splitlines() if x.startswith("rocmpanel_gpu_info{"))
    assert 'gfx=""' in info and 'link=""' in info and 'perf_level=""' in info
    (read,) = read_page(text).gpus
    assert (read.sample.identity.gfx, read.sample.link, read.sample.perf_level) == (None,) * 3


def test_a_figure_a_gpu_lacks_is_left_out_not_zero() -> None:
    gpu = dataclasses.replace(sample().gpus[0], power_w=None, fan_rpm=None)
    text = page(Sample(1.0, (gpu,), None), host="box").decode()
    assert "rocmpanel_gpu_power_watts{" not in text
    assert "# TYPE rocmpanel_gpu_power_watts gauge" in text
    (read,) = read_page(text).gpus
    assert read.sample.power_w is None and read.sample.fan_rpm is None
    assert read.sample.power_cap_w == 327.0


def test_names_carry_base_units_and_the_labels() -> None:
    text = page(sample(), host="box").decode()
    line = next(x for x in text.splitlines() if x.startswith("rocmpanel_gpu_shader_clock_hertz"))
    assert 'bdf="0000:03:00.0"' in line and 'gpu="0"' in line and 'host="box"' in line
    assert float(line.rsplit(" ", 1)[1]) == 2482.0e6


def test_bearer_check() -> None:
    assert bearer_ok(None, None)
    assert bearer_ok(f"Bearer {KEY}", KEY) and bearer_ok(f"bearer  {KEY} ", KEY)
    assert not bearer_ok(None, KEY)
    assert not bearer_ok(f"Basic {KEY}", KEY)
    assert not bearer_ok(f"Bearer {KEY}x", KEY)


def get(url: str, key: str | None = None, method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    collector = OwnCollector("box")
    collector.update(sample())
    with MetricsServer(registry_for(collector), port=0, key=KEY) as running:
        yield running


def test_server_listens_on_127_0_0_1_by_default(server: MetricsServer) -> None:
    assert DEFAULT_HOST == "127.0.0.1"
    assert server.host == "127.0.0.1"
    assert server.url == f"http://127.0.0.1:{server.port}/metrics"


def test_the_key_is_required(server: MetricsServer) -> None:
    status, body = get(server.url)
    assert status == 401 and b"API key" in body
    assert get(server.url, "rp-wrong-key-0123456789abcdef")[0] == 401
    status, body = get(server.url, KEY)
    assert status == 200
    assert [g.sample.busy_percent for g in read_page(body).gpus] == [42.0, 99.0]


def test_a_silent_client_does_not_stall_a_scrape(server: MetricsServer) -> None:
    # A client that connects and sends half a request line holds only its own thread.
    import socket

    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as idle:
        idle.sendall(b"GET /metrics HTTP/1.1\r\n")
        assert get(server.url, KEY)[0] == 200  # within urlopen's 5 s, not after 10 s


def test_only_get_metrics_is_served(server: MetricsServer) -> None:
    base = server.url.removesuffix("/metrics")
    assert get(base + "/", KEY)[0] == 404
    assert get(base + "/metrics/../etc/passwd", KEY)[0] == 404
    assert get(server.url, KEY, method="POST")[0] == 405


def test_a_port_in_use_is_a_clear_message() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(PanelError, match=f"Port {port} on 127.0.0.1 is already in use"):
            MetricsServer(registry_for(OwnCollector("box")), "127.0.0.1", port)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9400", ("127.0.0.1", 9400)),
        ("0.0.0.0:9401", ("0.0.0.0", 9401)),
        ("[::1]:9402", ("::1", 9402)),
        ("localhost:0", ("localhost", 0)),
    ],
)
def test_listen_address(text: str, expected: tuple[str, int]) -> None:
    assert listen_address(text) == expected


@pytest.mark.parametrize("text", ["", "host:", "host:99999", "a b:1", "http://x:1"])
def test_bad_listen_addresses(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        listen_address(text)


def test_no_key_is_refused_off_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["telemetry", "--prometheus", "0.0.0.0:0", "--no-key"]) == 2
    assert "only on 127.0.0.1" in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_real_telemetry_process_is_scraped_then_stops_on_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "sys").mkdir()
    (tmp_path / "proc").mkdir()
    port = free_port()
    env = {**os.environ, "ROCMPANEL_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    argv = [sys.executable, "-m", "rocmpanel", "telemetry", "--prometheus",
            f"127.0.0.1:{port}", "--interval", "0.2", "--sysfs-root", str(tmp_path / "sys"),
            "--proc-root", str(tmp_path / "proc")]  # fmt: skip
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        if not first.startswith(f"Serving GPU telemetry at http://127.0.0.1:{port}/metrics"):
            process.kill()
            pytest.fail(f"did not start: {first}{process.communicate(timeout=10)[1]}")
        banner = [first]  # read here: communicate() below skips what readline buffered
        while not banner[-1].startswith("Press Ctrl+C") and len(banner) < 20:
            banner.append(process.stdout.readline())
        key = (home / "config" / "telemetry" / "api-key").read_text().strip()
        url = f"http://127.0.0.1:{port}/metrics"
        assert get(url)[0] == 401
        status, body = get(url, key)
        assert status == 200
        assert b"# TYPE rocmpanel_gpu_busy_percent gauge" in body
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
    assert process.returncode == 128 + signal.SIGTERM
    assert "Stopped serving telemetry." in err and "stopped by SIGTERM" in err
    shown = "".join(banner) + out
    assert key not in shown  # masked unless --show-key
    assert "; masked here: --show-key prints it whole)." in shown
    assert f"stored in {home / 'config' / 'telemetry' / 'api-key'}" in shown
    assert "--node URL --key-file FILE" in shown
    with pytest.raises(OSError):  # nothing listens any more
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
