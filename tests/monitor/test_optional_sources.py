"""Windows PDH parsing and amdsmi value conversion (pure parts, tested on Linux), and psutil."""

from __future__ import annotations

from rocmpanel.monitor.amdsmi_source import na, sample_from_metrics
from rocmpanel.monitor.host_source import HostSource
from rocmpanel.monitor.pdh_source import (
    AdapterNames,
    NamedAdapter,
    gpu_samples,
    parse_instance,
    processes_from_counters,
    utilisation_by_adapter,
)
from rocmpanel.monitor.sample import GpuIdentity

ADAPTER = "luid_0x00000000_0x0000c3b4_phys_0"
ENGINES = {
    "pid_1234_luid_0x00000000_0x0000C3B4_phys_0_eng_0_engtype_3D": 20.0,
    "pid_5678_luid_0x00000000_0x0000C3B4_phys_0_eng_0_engtype_3D": 15.0,
    "pid_5678_luid_0x00000000_0x0000C3B4_phys_0_eng_3_engtype_Compute 0": 60.0,
    "pid_5678_luid_0x00000000_0x0000C3B4_phys_0_eng_5_engtype_Copy": 2.0,
    "pid_42_luid_0x00000000_0x0000AAAA_phys_0_eng_0_engtype_3D": 1.0,
    "garbage": 99.0,
}
DEDICATED = {f"{ADAPTER}": 6 * 2**30, "luid_0x00000000_0x0000aaaa_phys_0": 2**20}
SHARED = {f"{ADAPTER}": 2**28}


def test_parse_instance_names() -> None:
    inst = parse_instance("pid_1234_luid_0x00000000_0x0000C3B4_phys_0_eng_3_engtype_Compute 0")
    assert inst is not None
    assert (inst.adapter, inst.pid, inst.engine, inst.engine_type) == (
        ADAPTER,
        1234,
        3,
        "Compute 0",
    )
    adapter = parse_instance("luid_0x00000000_0x0000C3B4_phys_0")
    assert adapter is not None and adapter.pid is None and adapter.engine is None
    assert parse_instance("_Total") is None


def test_utilisation_is_the_busiest_engine_summed_over_processes() -> None:
    busy = utilisation_by_adapter(ENGINES)
    assert busy[ADAPTER] == 60.0  # compute 60 beats 3D 20 + 15
    assert busy["luid_0x00000000_0x0000aaaa_phys_0"] == 1.0


def test_gpu_samples_and_processes() -> None:
    ident = GpuIdentity(ADAPTER, None, None, None, "Radeon RX 7900 XTX")
    names = AdapterNames([NamedAdapter((0, 0xC3B4), ident, 24 * 2**30)])
    (main,) = gpu_samples(names, ENGINES, DEDICATED, SHARED)  # 0x...aaaa is not named
    assert main.identity.name == "Radeon RX 7900 XTX"
    assert (main.busy_percent, main.vram_used_bytes, main.vram_total_bytes) == (
        60.0,
        6 * 2**30,
        24 * 2**30,
    )
    assert main.gtt_used_bytes == 2**28
    assert main.temp_edge_c is None  # PDH has no temperatures
    unnamed = gpu_samples(AdapterNames(), ENGINES, DEDICATED, SHARED)  # DXGI did not answer
    assert [s.identity.key for s in unnamed] == ["luid_0x00000000_0x0000aaaa_phys_0", ADAPTER]
    rows = processes_from_counters(
        ENGINES,
        {f"pid_5678_{ADAPTER}": 2**30},
        {},
        {5678: "python.exe"},
        {5678: "chat"},
    )
    by_pid = {r.pid: r for r in rows}
    assert by_pid[5678].vram_bytes == 2**30 and by_pid[5678].engine_percent == 60.0
    assert by_pid[5678].worker == "chat" and by_pid[5678].name == "python.exe"
    assert by_pid[1234].vram_bytes is None and by_pid[1234].engine_percent == 20.0


def test_amdsmi_na_conversion() -> None:
    assert na("N/A") is None
    assert na("n/a") is None
    assert na(None) is None
    assert na(65535) is None
    assert na("42 W") == 42.0
    assert na({"value": 7, "unit": "C"}) == 7.0
    assert na(True) is None
    sample = sample_from_metrics(
        GpuIdentity("0000:03:00.0", None, "0000:03:00.0", None, "MI300X"),
        {"gfx_activity": 12, "vram_used": 1024, "vram_total": "N/A", "power": "N/A"},
    )
    assert sample.busy_percent == 12.0
    assert sample.vram_used_bytes == 2**30
    assert sample.vram_total_bytes is None and sample.power_w is None


def test_host_source_reads_the_real_host() -> None:
    host = HostSource().read()
    assert host.ram_total_bytes and host.ram_total_bytes > 0
    assert host.ram_used_bytes is not None and 0 < host.ram_used_bytes <= host.ram_total_bytes
    assert len(host.per_core_percent) >= 1
    assert host.cpu_percent is not None and 0.0 <= host.cpu_percent <= 100.0


def test_a_source_with_a_minimum_interval_is_read_at_most_that_often(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.monitor.collector import TelemetryCollector
    from rocmpanel.monitor.pdh_source import CAPABILITIES as PDH_CAPABILITIES
    from rocmpanel.monitor.source import NullProcessSource
    from rocmpanel.monitor.source_factory import SourceSet

    class FakePdh:
        calls = 0
        capabilities = PDH_CAPABILITIES  # rates need a second between collections

        def identities(self) -> tuple[()]:
            return ()

        def read(self) -> tuple[()]:
            FakePdh.calls += 1
            return ()

        def close(self) -> None:
            pass

    collector = TelemetryCollector(tmp_path, tmp_path, processes=False, host=False)
    collector.sources = SourceSet(FakePdh(), NullProcessSource())
    for _ in range(5):
        collector.read_gpus()
    assert FakePdh.calls == 1
