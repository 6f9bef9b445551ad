"""The Nodes page: a node served on 127.0.0.1 is added, its GPU rows show the page's figures,
its history is drawn, it is saved and loaded again, and removed.

The served page is written from AMD's GPU metrics exporter's documented names (see
tests/monitor/test_prometheus_read.py), not captured from a running exporter.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rocmpanel.gui.background import wait_for_background
from rocmpanel.monitor.nodes import NodeSpec, load_nodes, nodes_file, save_nodes
from rocmpanel.monitor.views.nodes_view import COLUMNS, NodesView

LABELS = 'card_series="AMD Instinct MI300X OAM",gpu_id="{gpu}",hostname="node-a"'
PAGE = "".join(
    f"# TYPE {name} gauge\n" + "".join(f"{name}{{{LABELS.format(gpu=i)}}} {v}\n" for i, v in vals)
    for name, vals in (
        ("gpu_gfx_activity", ((0, 37), (1, 4))),
        ("gpu_used_vram", ((0, 2048), (1, 10))),
        ("gpu_total_vram", ((0, 196608), (1, 196608))),
        ("gpu_junction_temperature", ((0, 60), (1, 41))),
        ("gpu_memory_temperature", ((0, 48), (1, 38))),
        ("gpu_power_usage", ((0, 350), (1, 130))),
        ("gpu_ecc_correct_total", ((0, 3), (1, 0))),
        ("gpu_ecc_uncorrect_total", ((0, 0), (1, 0))),
    )
).encode()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def node_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def make_view(qtbot):  # type: ignore[no-untyped-def]
    views: list[NodesView] = []

    def make() -> NodesView:
        view = NodesView(interval_ms=60_000)
        qtbot.addWidget(view)
        views.append(view)
        return view

    yield make
    for view in views:
        view.shutdown()
    assert wait_for_background(10_000)


def cells(view: NodesView, row: int) -> dict[str, str]:
    return {COLUMNS[c]: view.table.item(row, c).text() for c in range(len(COLUMNS))}


def test_a_served_node_shows_its_gpus(qtbot, make_view, node_url: str) -> None:  # type: ignore[no-untyped-def]
    view = make_view()
    qtbot.waitUntil(lambda: view.timer.isActive(), timeout=5000)  # the saved list is in
    assert view.table.rowCount() == 0 and "No node yet" in view.message.text()
    view.url_edit.setText(node_url)
    view.name_edit.setText("rack1")
    with qtbot.waitSignal(view.polled, timeout=10_000):
        view.add_button.click()
    assert view.table.rowCount() == 2
    first = cells(view, 0)
    assert first["Node"] == "rack1"
    assert first["GPU"] == "AMD Instinct MI300X OAM (GPU 0)"
    assert first["State"] == "up"
    assert first["Utilisation"] == "37 %"
    assert first["VRAM used / total"] == "2.0 GiB / 192.0 GiB"
    assert first["Temperature"] == "junction 60 °C  mem 48 °C"
    assert first["Power"] == "350 W"
    assert first["ECC corr. / uncorr."] == "3 / 0"
    assert cells(view, 1)["Utilisation"] == "4 %"
    assert view.key_edit.text() == "" and view.url_edit.text() == ""
    assert view.message.text() == "Added rack1: 2 GPUs read."  # not "reading it…" any more

    view.table.selectRow(0)  # its history, drawn with the Monitor's own GPU panel
    assert view.panel is not None and view.panel.key == "rack1/gpu0"
    qtbot.waitUntil(lambda: load_nodes().specs == (NodeSpec("rack1", node_url),), timeout=5000)

    view.table.selectRow(1)
    view.remove_button.click()
    assert view.table.rowCount() == 0 and view.panel is None
    qtbot.waitUntil(lambda: load_nodes().specs == (), timeout=5000)


def test_a_node_that_is_down_says_why(qtbot, make_view) -> None:  # type: ignore[no-untyped-def]
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    view = make_view()
    qtbot.waitUntil(lambda: view.timer.isActive(), timeout=5000)
    view.url_edit.setText(f"http://127.0.0.1:{port}/metrics")
    view.name_edit.setText("gone")
    with qtbot.waitSignal(view.polled, timeout=10_000):
        view.add_button.click()
    row = cells(view, 0)
    assert row["Node"] == "gone" and row["GPU"] == "—"
    assert row["State"].startswith("down since ") and "refused the connection" in row["State"]
    assert view.message.text().startswith("Added gone, but it does not answer: ")
    assert "refused the connection" in view.message.text()


def test_bad_input_is_refused_with_a_sentence(qtbot, make_view) -> None:  # type: ignore[no-untyped-def]
    view = make_view()
    qtbot.waitUntil(lambda: view.timer.isActive(), timeout=5000)
    view.url_edit.setText("ftp://node1/metrics")
    view.add_button.click()
    assert "not an http:// or https:// URL" in view.message.text()
    assert view.nodes == {}


def test_the_saved_list_is_loaded(qtbot, make_view, node_url: str) -> None:  # type: ignore[no-untyped-def]
    save_nodes([NodeSpec("saved", node_url, "rp-key-0123456789abcdef")])
    view = NodesView(interval_ms=60_000)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.polled, timeout=10_000):
        pass  # loading the list starts the first poll
    assert list(view.nodes) == ["saved"]
    assert cells(view, 0)["Utilisation"] == "37 %"
    assert str(nodes_file()) in view.key_note.text()
    view.shutdown()


def test_the_table_keeps_rows_and_the_plots_their_size(qtbot, make_view, node_url: str) -> None:  # type: ignore[no-untyped-def]
    """What is left of a 1280x820 window for this page: the GPU panel (taller than that)
    scrolls instead of squeezing the table to one row and drawing its hint over the axes."""
    view = make_view()
    view.resize(1240, 560)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.timer.isActive(), timeout=5000)
    with qtbot.waitSignal(view.polled, timeout=10_000):
        view.add_node(NodeSpec("rack1", node_url))
    view.table.selectRow(0)
    assert view.panel is not None
    panel = view.panel

    def laid_out() -> None:
        assert panel.isVisible() and panel.height() >= panel.minimumSizeHint().height()
        # the hint sits under the plots, not over their axes
        assert panel.readout.geometry().top() > panel.graphics.geometry().bottom()

    qtbot.waitUntil(laid_out, timeout=5000)
    rows_shown = view.table.viewport().height() / view.table.rowHeight(0)
    assert rows_shown >= 4
    # Plots get the whole width (alerts sit beside the table): three plots of 400 px a row.
    assert view.plot_scroll.viewport().width() >= 1100


def test_no_mnemonic_clashes_with_the_monitor_pages(make_view) -> None:  # type: ignore[no-untyped-def]
    view = make_view()
    letters = [b.text()[b.text().index("&") + 1].lower()
               for b in (view.add_button, view.remove_button, view.poll_button)]  # fmt: skip
    letters.append("u")  # "&URL:"
    assert len(set(letters)) == len(letters)
    assert not {"m", "n"} & set(letters)  # the Monitor's "This &machine" and "&Nodes" tabs
