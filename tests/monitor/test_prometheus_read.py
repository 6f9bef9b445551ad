"""Reading Prometheus pages of AMD's GPU metrics exporter and of rocmpanel into GpuSamples.

The exporter pages here are written by hand from the exporter's documented metric and label
names (docs/configuration/metricslist.md and pkg/amdgpu/gpuagent/gpuagent_gpu_metrics.go of
ROCm/device-metrics-exporter at 0778d3ab, see resources/prometheus_metrics.yaml): lower-case
field names, one gauge series per GPU labelled gpu_id, hostname, card_model, serial_number...
They are built from the documentation, not captured from a running exporter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rocmpanel.base.units import MIB
from rocmpanel.monitor import prometheus_read as pr
from rocmpanel.monitor.prometheus_read import PageError, PageProblem, read_page
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample

RESOURCE = Path(__file__).resolve().parents[2] / "resources" / "prometheus_metrics.yaml"


def labels(gpu: int, host: str = "node-a", **extra: str) -> str:
    base = {
        "card_model": "102-G30211-0C",
        "card_series": "AMD Instinct MI300X OAM",
        "card_vendor": "AMD",
        "container": "",
        "deployment_mode": "baremetal",
        "gpu_compute_partition_type": "spx",
        "gpu_id": str(gpu),
        "gpu_memory_partition_type": "nps1",
        "gpu_partition_id": "0",
        "hostname": host,
        "job_id": "",
        "namespace": "",
        "pod": "",
        "serial_number": f"69240900540{gpu}",
        **extra,
    }
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(base.items())) + "}"


def gauge(name: str, rows: list[tuple[str, float]], prefix: str = "") -> str:
    out = [f"# HELP {prefix}{name} test page", f"# TYPE {prefix}{name} gauge"]
    out += [f"{prefix}{name}{lab} {value}" for lab, value in rows]
    return "\n".join(out)


def mi300x_page(prefix: str = "", host: str = "node-a") -> str:
    """Two MI300X GPUs as the exporter documents them; GPU 1 reports no edge temperature
    (MI3xx: written as 2^32-1)."""
    g0, g1 = labels(0, host), labels(1, host)
    parts = [
        gauge("gpu_nodes_total", [(f'{{hostname="{host}"}}', 2)], prefix),
        gauge("gpu_gfx_activity", [(g0, 37), (g1, 0)], prefix),
        gauge("gpu_umc_activity", [(g0, 12), (g1, 0)], prefix),
        gauge("gpu_used_vram", [(g0, 1024), (g1, 284)], prefix),
        gauge("gpu_total_vram", [(g0, 196592), (g1, 196592)], prefix),
        gauge("gpu_free_vram", [(g0, 195568), (g1, 196308)], prefix),
        gauge("gpu_used_gtt", [(g0, 11), (g1, 11)], prefix),
        gauge("gpu_total_gtt", [(g0, 257823), (g1, 257823)], prefix),
        gauge("gpu_junction_temperature", [(g0, 60), (g1, 41)], prefix),
        gauge("gpu_memory_temperature", [(g0, 48), (g1, 38)], prefix),
        gauge("gpu_edge_temperature", [(g0, 4294967295), (g1, 4294967295)], prefix),
        gauge("gpu_package_power", [(g0, 352), (g1, 131)], prefix),
        gauge("gpu_power_usage", [(g0, 350), (g1, 130)], prefix),
        gauge(
            "gpu_clock",
            [
                (labels(0, host, clock_index="0", clock_type="system"), 2100),
                (labels(0, host, clock_index="1", clock_type="system"), 1900),
                (labels(0, host, clock_index="0", clock_type="memory"), 1300),
                (labels(0, host, clock_index="0", clock_type="fabric"), 1600),
                (labels(1, host, clock_index="0", clock_type="system"), 132),
            ],
            prefix,
        ),
        gauge("gpu_ecc_correct_total", [(g0, 3), (g1, 0)], prefix),
        gauge("gpu_ecc_uncorrect_total", [(g0, 0), (g1, 1)], prefix),
        gauge("gpu_health", [(g0, 1), (g1, 0)], prefix),
        gauge("pcie_speed", [(g0, 32), (g1, 32)], prefix),
    ]
    return "\n".join(parts) + "\n"


def test_exporter_page_maps_onto_samples_with_units_converted() -> None:
    reading = read_page(mi300x_page().encode())
    assert reading.source == "AMD GPU metrics exporter"
    assert reading.hosts == ("node-a",)
    first, second = reading.gpus
    g = first.sample
    assert g.identity.key == "gpu0"
    assert g.identity.name == "AMD Instinct MI300X OAM (GPU 0)"
    assert g.busy_percent == 37 and g.mem_busy_percent == 12
    assert g.vram_used_bytes == 1024 * MIB and g.vram_total_bytes == 196592 * MIB
    assert g.gtt_used_bytes == 11 * MIB and g.gtt_total_bytes == 257823 * MIB
    assert g.temp_junction_c == 60 and g.temp_mem_c == 48
    assert g.temp_edge_c is None  # 2^32-1: "not applicable", not 4 billion degrees
    assert g.power_w == 350  # gpu_power_usage comes first (listed for MI2xx and MI3xx)
    assert g.sclk_mhz == 2100 and g.mclk_mhz == 1300  # lowest clock_index of each type
    assert g.invalid == ()
    assert (first.ecc_correctable, first.ecc_uncorrectable, first.healthy) == (3, 0, True)
    assert first.host == "node-a" and first.serial == "692409005400"
    assert second.sample.busy_percent == 0 and second.sample.mclk_mhz is None
    assert (second.ecc_uncorrectable, second.healthy) == (1, False)


def test_a_prefix_set_by_the_deployment_is_understood() -> None:
    reading = read_page(mi300x_page(prefix="amd_"))
    assert [g.sample.busy_percent for g in reading.gpus] == [37, 0]
    assert reading.gpus[0].sample.vram_total_bytes == 196592 * MIB


def test_mi2xx_power_comes_from_the_average_package_power() -> None:
    page = gauge("gpu_average_package_power", [(labels(0), 271)]) + "\n"
    page += gauge("gpu_edge_temperature", [(labels(0), 44)]) + "\n"
    (gpu,) = read_page(page).gpus
    assert gpu.sample.power_w == 271 and gpu.sample.temp_edge_c == 44
    assert gpu.sample.busy_percent is None  # absent from the page: no value, not 0


def test_figures_out_of_physical_range_are_dropped_with_the_reason() -> None:
    page = gauge("gpu_junction_temperature", [(labels(0), 9999)]) + "\n"
    page += gauge("gpu_gfx_activity", [(labels(0), 250)]) + "\n"
    (gpu,) = read_page(page).gpus
    assert gpu.sample.temp_junction_c is None and gpu.sample.busy_percent is None
    reasons = dict(gpu.sample.invalid)
    assert set(reasons) == {"temps_c.junction", "busy_percent"}
    assert "9999" in reasons["temps_c.junction"]


def test_several_hosts_on_one_page_are_kept_apart() -> None:
    """A federating Prometheus serves many hosts under one family of each name."""
    both = gauge("gpu_gfx_activity", [(labels(0, "node-a"), 5), (labels(0, "node-b"), 90)])
    reading = read_page(both + "\n")
    assert reading.hosts == ("node-a", "node-b")
    a, b = reading.gpus
    assert (a.host, a.sample.busy_percent, b.host, b.sample.busy_percent) == (
        "node-a",
        5,
        "node-b",
        90,
    )
    joined = pr.with_node(b, "rack1", many_hosts=True)
    assert joined.sample.identity.key == "rack1/node-b/gpu0"
    assert joined.sample.identity.name == "AMD Instinct MI300X OAM (GPU 0) on rack1/node-b"
    alone = pr.with_node(b, "rack1", many_hosts=False)
    assert alone.sample.identity.key == "rack1/gpu0"


@pytest.mark.parametrize(
    ("data", "kind", "words"),
    [
        (b"<!doctype html><html><body>Grafana</body></html>", PageProblem.NOT_PROMETHEUS, "HTML"),
        (b'{"status": "success", "data": []}', PageProblem.NOT_PROMETHEUS, "JSON"),
        (b"\xff\xfe\x00garbage", PageProblem.NOT_TEXT, "UTF-8"),
        (b"", PageProblem.NO_GPU_METRICS, "no GPU metrics"),
        (
            b'# TYPE node_cpu_seconds_total counter\nnode_cpu_seconds_total{cpu="0"} 12.5\n',
            PageProblem.NO_GPU_METRICS,
            "right port",
        ),
        (b"x" * (pr.MAX_PAGE_BYTES + 1), PageProblem.TOO_LARGE, "MiB"),
    ],
)
def test_garbage_is_a_typed_error_with_a_sentence(
    data: bytes, kind: PageProblem, words: str
) -> None:
    with pytest.raises(PageError) as caught:
        read_page(data)
    assert caught.value.kind is kind
    assert words in caught.value.message


def test_a_rocmpanel_without_gpu_says_so() -> None:
    from rocmpanel.monitor.prometheus_export import page

    with pytest.raises(PageError, match="runs rocmpanel but has no AMD GPU"):
        read_page(page(Sample(1.0, (), None), host="box"))


def test_own_page_keys_gpus_by_pci_address() -> None:
    from rocmpanel.monitor.prometheus_export import page

    ident = GpuIdentity("0000:03:00.0", "card0", "0000:03:00.0", "1002:744c", "RX 7900 XTX")
    gpu = GpuSample(ident, asleep=True, vram_used_bytes=5 * MIB, vram_total_bytes=24 * MIB)
    (read,) = read_page(page(Sample(1.0, (gpu,), None), host="box")).gpus
    assert read.sample.identity.key == "0000:03:00.0" and read.sample.asleep
    assert read.host == "box" and read.sample.vram_used_bytes == 5 * MIB


def test_the_sourced_resource_table_matches_the_code() -> None:
    doc = yaml.safe_load(RESOURCE.read_text(encoding="utf-8"))
    exporter = doc["exporter"]
    table = {m["name"]: (m["field"], float(m["scale"])) for m in exporter["metrics"]}
    assert table == pr.EXPORTER_FIELDS
    assert tuple(exporter["power"]) == pr.EXPORTER_POWER
    assert exporter["clocks"] == pr.EXPORTER_CLOCK_TYPES
    assert exporter["errors"] == pr.EXPORTER_ECC
    assert exporter["gpu_label"] == pr.EXPORTER_GPU_LABEL
    assert exporter["mb_bytes"] == pr.EXPORTER_MB
    assert tuple(float(v) for v in exporter["not_applicable"]) == pr.NOT_APPLICABLE
    for metric in exporter["metrics"]:
        assert set(metric["src"]) <= set(doc["sources"]), metric["name"]
    for source in doc["sources"].values():
        assert source["url"].startswith("https://") and source["checked"]
