"""Edge cases of the Prometheus page (trailing slash, IPv6 URL, the Bearer scheme, GPU order)
and of node URLs (no credentials in the URL, no port 0, 403 as a refused key)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from rocmpanel.monitor.prometheus_export import MetricsServer, OwnCollector, page, registry_for
from rocmpanel.monitor.prometheus_read import read_page
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample


def _gpu(slot: str) -> GpuSample:
    return GpuSample(GpuIdentity(slot, None, slot, None, f"GPU at {slot}", None), False,
                     busy_percent=1.0)  # fmt: skip


def test_gpus_keep_their_numeric_order_past_ten() -> None:
    gpus = tuple(_gpu(f"0000:{i + 1:02x}:00.0") for i in range(12))
    reading = read_page(page(Sample(1.0, gpus, None), host="box"))
    assert [g.sample.identity.key for g in reading.gpus] == [g.identity.pci_slot for g in gpus]


def test_a_trailing_slash_is_the_same_page() -> None:
    collector = OwnCollector("box")
    collector.update(Sample(1.0, (_gpu("0000:03:00.0"),), None))
    with (
        MetricsServer(registry_for(collector), port=0, key=None) as server,
        urllib.request.urlopen(server.url + "/", timeout=5) as response,
    ):
        assert response.status == 200


def test_an_ipv6_listen_address_gives_a_url_in_brackets() -> None:
    collector = OwnCollector("box")
    try:
        running = MetricsServer(registry_for(collector), host="::1", port=0, key=None)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with running as server:
        assert server.url == f"http://[::1]:{server.port}/metrics"


def test_a_user_name_in_the_node_url_is_refused() -> None:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.monitor.nodes import check_url

    with pytest.raises(PanelError, match="key field"):
        check_url("http://rp-secret-key@node1:9400/metrics")


def test_only_a_bearer_key_is_accepted() -> None:
    from rocmpanel.monitor.prometheus_export import bearer_ok

    assert bearer_ok("Bearer k3y", "k3y")
    assert not bearer_ok("Token k3y", "k3y")


def test_a_forbidden_answer_says_the_key_is_wrong() -> None:
    from rocmpanel.monitor.nodes import Problem, _http_error

    assert _http_error(403, "k3y").kind is Problem.NEEDS_KEY
    assert _http_error(403, None).kind is Problem.NEEDS_KEY


def test_port_0_is_refused() -> None:
    from rocmpanel.base.errors import PanelError
    from rocmpanel.monitor.nodes import check_url

    with pytest.raises(PanelError, match="port 0"):
        check_url("http://node1:0/metrics")
