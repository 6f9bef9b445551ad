"""The Monitor on Windows, run on Linux through its seams: a fake ``win32pdh`` with the
instance names Windows gives, a fake DXGI adapter list and a fake clock, through
``open_sources(platform="win32")`` and the collector to the samples and process rows the
Monitor shows. Covers: AMD adapters only, named, with VRAM totals and the inventory's slot;
process rows on their GPU; the first reading a second after the baseline; a collection that
fails later ("no data" with the reason, then recovery); why the source cannot start."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path

import pytest

from rocmpanel.base.units import GIB, MIB
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.monitor import source_factory
from rocmpanel.monitor.collector import TelemetryCollector
from rocmpanel.monitor.dxgi import FLAG_REMOTE, FLAG_SOFTWARE, DxgiAdapter
from rocmpanel.monitor.pdh_source import (
    ADAPTER_DEDICATED,
    ADAPTER_SHARED,
    ENGINE_COUNTER,
    NO_DATA,
    PROCESS_DEDICATED,
    PROCESS_SHARED,
    AdapterNames,
    NamedAdapter,
    PdhGpuSource,
    PdhProcessSource,
    PdhQuery,
    clean_values,
    luid_of,
    named_adapters,
    processes_from_counters,
)
from rocmpanel.monitor.sample import GpuIdentity, GpuSample
from rocmpanel.monitor.source import NullGpuSource, NullProcessSource
from rocmpanel.monitor.source_factory import (
    console_python,
    identity_of,
    open_sources,
    pdh_unavailable,
)

SLOT = "0000:03:00.0"
DGPU = "luid_0x00000000_0x0000C3B4_phys_0"  # as PDH prints it
BRD = "luid_0x00000000_0x0000D0B5_phys_0"  # Microsoft Basic Render Driver
VRAM_TOTAL = 24560 * MIB  # DedicatedVideoMemory of a 24 GB card

RADEON = DxgiAdapter(0, 0xC3B4, "AMD Radeon RX 7900 XTX", 0x1002, 0x744C, VRAM_TOTAL)
BASIC_RENDER = DxgiAdapter(
    0, 0xD0B5, "Microsoft Basic Render Driver", 0x1414, 0x8C, 0, FLAG_SOFTWARE
)
IGPU = DxgiAdapter(0, 0xE1A0, "AMD Radeon 780M Graphics", 0x1002, 0x15BF, 512 * MIB)
NVIDIA = DxgiAdapter(0, 0xF00D, "NVIDIA GeForce RTX 4090", 0x10DE, 0x2684, 24 * GIB)
INVENTORY = [
    identity_of(GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", bdf=SLOT))
]

# A compute job (5678) and the compositor (1234) on the Radeon, an app on Basic Render
# (4321), an idle window (9999): what GetFormattedCounterArray returns on Windows 11.
COUNTERS: dict[str, dict[str, float]] = {
    ENGINE_COUNTER: {
        f"pid_1234_{DGPU}_eng_0_engtype_3D": 4.0,
        f"pid_5678_{DGPU}_eng_0_engtype_3D": 1.5,
        f"pid_5678_{DGPU}_eng_3_engtype_Compute 0": 87.25,
        f"pid_5678_{DGPU}_eng_5_engtype_Copy": 3.0,
        f"pid_9999_{DGPU}_eng_0_engtype_3D": 0.0,
        f"pid_4321_{BRD}_eng_0_engtype_3D": 12.0,
    },
    ADAPTER_DEDICATED: {DGPU: 9.5 * GIB, BRD: 0.0},
    ADAPTER_SHARED: {DGPU: 256 * MIB, BRD: 64 * MIB},
    PROCESS_DEDICATED: {
        f"pid_1234_{DGPU}": 3 * MIB,
        f"pid_5678_{DGPU}": 8 * GIB,
        f"pid_9999_{DGPU}": 0.0,
    },
    PROCESS_SHARED: {f"pid_5678_{DGPU}": 64 * MIB, f"pid_4321_{BRD}": 64 * MIB},
}


class PdhError(Exception):
    """pywintypes.error's shape: (winerror, funcname, strerror)."""

    def __init__(self, winerror: int, funcname: str, strerror: str) -> None:
        super().__init__(winerror, funcname, strerror)
        self.winerror, self.funcname, self.strerror = winerror, funcname, strerror


INVALID_DATA = PdhError(-1073738810, "CollectQueryData", "The data is not valid.")  # 0xC0000BC6
NO_OBJECT = PdhError(
    -1073738824, "AddEnglishCounter", "The specified object was not found on the computer."
)  # PDH_CSTATUS_NO_OBJECT, 0xC0000BB8: no "GPU Engine" counter set


class FakePdh:
    """The five win32pdh calls PdhQuery makes; ``fail_collect``/``fail_add``: raise that."""

    PDH_FMT_DOUBLE = 0x200

    def __init__(self, counters: Mapping[str, Mapping[str, float]] = COUNTERS) -> None:
        self.counters = counters
        self.collections = 0
        self.closed = False
        self.fail_collect: Exception | None = None
        self.fail_add: Exception | None = None

    def OpenQuery(self) -> str:
        return "query"

    def AddEnglishCounter(self, query: str, path: str) -> str:
        if self.fail_add is not None and path == ENGINE_COUNTER:
            raise self.fail_add
        return path

    def CollectQueryData(self, query: str) -> None:
        if self.fail_collect is not None:
            raise self.fail_collect
        self.collections += 1

    def GetFormattedCounterArray(self, handle: str, fmt: int) -> Mapping[str, float]:
        assert fmt == self.PDH_FMT_DOUBLE
        return self.counters[handle]

    def CloseQuery(self, query: str) -> None:
        self.closed = True


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Fake PDH, DXGI (Radeon + Basic Render) and psutil names behind open_sources."""
    pdh, clock = FakePdh(), Clock()
    adapters = [BASIC_RENDER, RADEON]
    monkeypatch.setattr(source_factory, "open_pdh_query", lambda: PdhQuery(pdh, clock))
    monkeypatch.setattr(source_factory, "dxgi_adapters", lambda: list(adapters))
    monkeypatch.setattr(
        "rocmpanel.monitor.pdh_source.process_names",
        lambda pids: {pid: f"app{pid}.exe" for pid in pids if pid != 9999},
    )
    return pdh, clock, adapters


def windows_collector(
    tmp_path: Path, clock: Clock, gpus: list[GpuIdentity] | None = INVENTORY
) -> TelemetryCollector:
    """The collector of a Windows panel on the fakes (no host figures)."""
    return TelemetryCollector(
        "/sys", tmp_path, platform="win32", host=False, gpus=gpus, clock=clock
    )


RADEON_IDENTITY = GpuIdentity(SLOT, None, SLOT, "1002:744c", "AMD Radeon RX 7900 XTX", "gfx1100")


def test_end_to_end_amd_gpu_named_with_vram_total_and_its_processes(
    windows, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pdh, clock, _ = windows
    collector = windows_collector(tmp_path, clock)
    assert isinstance(collector.sources.gpus, PdhGpuSource)
    found = collector.found()
    assert found.identities == (RADEON_IDENTITY,)  # known before the first reading
    assert found.note == "" and found.capabilities.source == "Windows PDH counters"
    clock.now = 101.0
    sample = collector.collect({5678: "chat"})
    (gpu,) = sample.gpus  # Basic Render is not shown
    assert gpu.identity == RADEON_IDENTITY
    assert (gpu.busy_percent, gpu.vram_used_bytes, gpu.vram_total_bytes, gpu.gtt_used_bytes) == (
        87.2,
        int(9.5 * GIB),
        VRAM_TOTAL,
        256 * MIB,
    )
    assert gpu.invalid == ()
    rows = {p.pid: p for p in sample.processes}
    assert sorted(rows) == [1234, 5678]  # not 4321 (Basic Render), not idle 9999
    job = rows[5678]
    assert job.pci_slot == gpu.identity.pci_slot == SLOT  # the table finds the GPU's name
    assert (job.vram_bytes, job.gtt_bytes, job.engine_percent) == (8 * GIB, 64 * MIB, 87.2)
    assert dict(job.engines) == {"3D": 1.5, "Compute 0": 87.2, "Copy": 3.0}
    assert (job.name, job.worker, job.sources, job.invalid) == ("app5678.exe", "chat", ("pdh",), ())
    assert (rows[1234].vram_bytes, rows[1234].gtt_bytes, rows[1234].name) == (
        3 * MIB,
        None,
        "app1234.exe",
    )
    assert pdh.collections == 2  # the baseline, then one shared by the GPU and process reads
    collector.close()
    assert pdh.closed


def test_process_vram_beyond_its_gpus_total_is_dropped_by_key_without_a_slot(
    windows, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pdh, clock, _ = windows
    pdh.counters = {**COUNTERS, PROCESS_DEDICATED: {f"pid_5678_{DGPU}": 30 * GIB}}
    collector = windows_collector(tmp_path, clock, gpus=None)
    clock.now = 101.0
    sample = collector.collect()
    (gpu,) = sample.gpus  # no inventory: keyed by its LUID, named by DXGI, gfx from the table
    assert gpu.identity == GpuIdentity(
        "luid_0x00000000_0x0000c3b4_phys_0", None, None, "1002:744c", "AMD Radeon RX 7900 XTX",
        "gfx1100",
    )  # fmt: skip
    (job,) = [p for p in sample.processes if p.pid == 5678]
    assert job.pci_slot == gpu.identity.key
    assert job.vram_bytes is None
    assert dict(job.invalid) == {"vram_bytes": "30 GiB in use is more than the total of 24 GiB"}


def test_the_first_reading_comes_one_second_after_the_baseline() -> None:
    pdh, clock = FakePdh(), Clock(100.0)
    query = PdhQuery(pdh, clock)
    named, _ = named_adapters([RADEON])
    gpus = PdhGpuSource(query, named)
    assert pdh.collections == 1  # the baseline
    clock.now = 100.999
    assert gpus.read() == ()
    assert pdh.collections == 1
    clock.now = 101.0
    (sample,) = gpus.read()
    assert pdh.collections == 2 and sample.busy_percent == 87.2
    clock.now = 101.5
    gpus.read()
    assert pdh.collections == 2  # at most one collection a second
    clock.now = 102.0
    gpus.read()
    assert pdh.collections == 3


def test_a_collection_that_fails_later_gives_no_data_with_the_reason_then_recovers(
    windows, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pdh, clock, _ = windows
    collector = windows_collector(tmp_path, clock)
    clock.now = 101.0
    assert collector.collect().gpus[0].vram_used_bytes == int(9.5 * GIB)
    clock.now = 102.0
    pdh.fail_collect = INVALID_DATA
    sample = collector.collect()
    reason = (
        "no data: Windows GPU counters stopped answering: The data is not valid "
        "(CollectQueryData, error 0xC0000BC6)."
    )
    assert sample.gpus == (GpuSample(RADEON_IDENTITY, False, invalid=((NO_DATA, reason),)),)
    assert sample.processes == ()  # no stale rows either
    clock.now = 103.0
    pdh.fail_collect = None
    sample = collector.collect()
    assert sample.gpus[0].busy_percent == 87.2 and sample.gpus[0].invalid == ()
    assert [p.pid for p in sample.processes] == [1234, 5678]


def test_without_pywin32_the_monitor_says_what_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> PdhQuery:
        raise ModuleNotFoundError("No module named 'win32pdh'")

    monkeypatch.setattr(source_factory, "open_pdh_query", missing)
    monkeypatch.setattr(source_factory.sys, "executable", r"C:\Py\Python312\pythonw.exe")
    sources = open_sources("/sys", "/proc", platform="win32")
    assert isinstance(sources.gpus, NullGpuSource)
    assert isinstance(sources.processes, NullProcessSource)
    assert (
        sources.note
        == sources.gpus.reason
        == (
            "Windows GPU counters need the pywin32 package, which is missing: run "
            r"`C:\Py\Python312\python.exe -m pip install pywin32` (or reinstall rocmpanel), "
            "then restart the panel."
        )
    )


def test_missing_gpu_counters_are_explained_and_the_query_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pdh = FakePdh()
    pdh.fail_add = NO_OBJECT
    monkeypatch.setattr(source_factory, "open_pdh_query", lambda: PdhQuery(pdh, Clock()))
    sources = open_sources("/sys", "/proc", platform="win32")
    assert isinstance(sources.gpus, NullGpuSource)
    assert sources.note == (
        "Windows GPU counters (PDH) could not be opened: The specified object was not found "
        "on the computer (AddEnglishCounter, error 0xC0000BB8). They need Windows 10 version "
        "1709 or later and a WDDM 2.0 display driver: update Windows and the AMD graphics "
        "driver. If both are current, Windows' counter registry may be damaged: `lodctr /R` "
        "in an administrator terminal rebuilds it."
    )
    assert pdh.closed


def test_a_broken_pywin32_is_told_apart_from_a_missing_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(source_factory.sys, "executable", r"C:\Py\pythonw.exe")
    broken = ImportError(
        "DLL load failed while importing win32pdh: The specified module could not be found."
    )
    assert pdh_unavailable(broken) == (
        "Windows GPU counters need the pywin32 package, which could not be loaded (DLL load "
        "failed while importing win32pdh: The specified module could not be found.): run "
        r"`C:\Py\python.exe -m pip install --force-reinstall pywin32`, then restart the panel."
    )


def test_pywin32_is_a_dependency_on_windows_only() -> None:
    import tomllib
    from packaging.requirements import Requirement

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    deps = [Requirement(d) for d in tomllib.loads(pyproject.read_text())["project"]["dependencies"]]
    pywin32 = [d for d in deps if d.name == "pywin32"]
    assert len(pywin32) == 1 and pywin32[0].marker is not None
    assert pywin32[0].marker.evaluate({"sys_platform": "win32"}) is True
    assert pywin32[0].marker.evaluate({"sys_platform": "linux"}) is False
    assert pywin32[0].specifier.contains("306")


def test_pdh_values_that_are_no_figure_are_dropped_and_negatives_read_zero() -> None:
    values = {"a": 12.5, "b": float("nan"), "c": float("inf"), "d": -3.0, "e": None, 7: "2"}
    assert clean_values(values) == {"a": 12.5, "d": 0.0, "7": 2.0}


def test_console_python_and_other_reasons() -> None:
    assert console_python(r"C:\Python\PythonW.EXE") == r"C:\Python\python.exe"
    assert console_python("/usr/bin/python3") == "/usr/bin/python3"
    assert pdh_unavailable(RuntimeError("boom")).startswith(
        "Windows GPU counters (PDH) could not be opened: boom. They need"
    )


def test_without_dxgi_every_pdh_adapter_shows_under_its_luid(
    windows, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    _, clock, _ = windows

    def broken() -> list[DxgiAdapter]:
        raise OSError("CreateDXGIFactory1 failed with 0x887A0004")

    monkeypatch.setattr(source_factory, "dxgi_adapters", broken)
    collector = windows_collector(tmp_path, clock, gpus=None)
    found = collector.found()
    assert found.identities == ()  # learnt while reading, as before
    assert found.note == (
        "GPU names and VRAM totals are not available (DXGI: CreateDXGIFactory1 failed with "
        "0x887A0004): every display adapter Windows lists is shown, named by its adapter id "
        "(LUID)."
    )
    clock.now = 101.0
    sample = collector.collect()
    keys = [g.identity.key for g in sample.gpus]
    assert keys == [DGPU.lower(), BRD.lower()]
    assert [g.vram_total_bytes for g in sample.gpus] == [None, None]
    assert [i.key for i in collector.identities] == keys
    assert {(p.pid, p.pci_slot) for p in sample.processes} == {
        (1234, DGPU.lower()),
        (5678, DGPU.lower()),
        (4321, BRD.lower()),
    }


def test_no_amd_adapter_says_which_adapters_windows_has(windows, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pdh, _, adapters = windows
    adapters[:] = [NVIDIA, BASIC_RENDER]
    sources = open_sources("/sys", tmp_path, platform="win32")
    assert isinstance(sources.gpus, NullGpuSource)
    assert isinstance(sources.processes, NullProcessSource)
    assert sources.note == (
        "No AMD GPU found: Windows lists these display adapters: NVIDIA GeForce RTX 4090, "
        "Microsoft Basic Render Driver."
    )
    assert pdh.closed


def test_named_adapters_keep_the_discrete_amd_gpus_only() -> None:
    remote = DxgiAdapter(
        0, 0xAAAA, "AMD Radeon RX 7900 XTX", 0x1002, 0x744C, VRAM_TOTAL, FLAG_REMOTE
    )
    named, note = named_adapters([IGPU, NVIDIA, BASIC_RENDER, remote, RADEON], INVENTORY)
    assert [n.identity for n in named] == [RADEON_IDENTITY]
    assert [(n.luid, n.vram_total_bytes) for n in named] == [((0, 0xC3B4), VRAM_TOTAL)]
    assert (
        note == "Not shown: AMD Radeon 780M Graphics (integrated; a discrete AMD GPU is present)."
    )


def test_an_apu_alone_keeps_its_integrated_gpu() -> None:
    named, note = named_adapters([BASIC_RENDER, IGPU])
    assert [n.identity for n in named] == [
        GpuIdentity(
            "luid_0x00000000_0x0000e1a0_phys_0", None, None, "1002:15bf",
            "AMD Radeon 780M Graphics", "gfx1103",
        )
    ]  # fmt: skip
    assert note == ""


def test_two_identical_cards_stay_two_and_numbered() -> None:
    second = DxgiAdapter(0, 0x1A2B, "AMD Radeon RX 7900 XTX", 0x1002, 0x744C, VRAM_TOTAL)
    inventory = [
        identity_of(GpuInfo("RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", bdf=SLOT)),
        identity_of(GpuInfo("RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", bdf="0000:0c:00.0")),
    ]
    named, _ = named_adapters([RADEON, second], inventory)
    assert [(n.identity.key, n.identity.name, n.identity.pci_slot) for n in named] == [
        ("luid_0x00000000_0x00001a2b_phys_0", "AMD Radeon RX 7900 XTX #1", None),
        ("luid_0x00000000_0x0000c3b4_phys_0", "AMD Radeon RX 7900 XTX #2", None),
    ]  # which slot is which card is unknown: neither gets one


def test_a_negative_luid_high_part_matches_pdhs_spelling() -> None:
    adapter = DxgiAdapter(-2, 0x80001234, "AMD Radeon PRO W7900", 0x1002, 0x7448, 48 * GIB)
    assert adapter.luid == (0xFFFFFFFE, 0x80001234)
    named, _ = named_adapters([adapter])
    names = AdapterNames(named)
    found = names.get("luid_0xFFFFFFFE_0x80001234_phys_0")
    assert found is not None and found.identity.name == "AMD Radeon PRO W7900"
    assert names.get("luid_0x00000000_0x80001234_phys_0") is None
    assert luid_of("pid_7_luid_0x0000_0x00C3B4_phys_1_eng_0_engtype_3D") == (0, 0xC3B4)
    assert luid_of("_Total") is None


def test_an_adapters_phys_parts_are_one_gpu_and_one_row() -> None:
    ident = GpuIdentity("g", None, None, "1002:744c", "Radeon")
    names = AdapterNames([NamedAdapter((0, 0xC3B4), ident, VRAM_TOTAL)])
    phys1 = "luid_0x00000000_0x0000C3B4_phys_1"
    rows = processes_from_counters(
        {f"pid_5_{DGPU}_eng_0_engtype_3D": 30.0, f"pid_5_{phys1}_eng_0_engtype_3D": 50.0},
        {f"pid_5_{DGPU}": 2 * MIB, f"pid_5_{phys1}": 3 * MIB},
        {},
        {5: "a.exe"},
        adapters=names,
    )
    assert [(r.pid, r.pci_slot, r.vram_bytes, r.engine_percent) for r in rows] == [
        (5, "g", 5 * MIB, 80.0)
    ]


def test_process_names_are_looked_up_once_per_pid() -> None:
    pdh, clock = FakePdh(), Clock()
    query = PdhQuery(pdh, clock)
    asked: list[set[int]] = []
    named, _ = named_adapters([RADEON])
    processes = PdhProcessSource(query, lambda pids: asked.append(pids) or {}, AdapterNames(named))
    clock.now = 101.0
    first = processes.scan()
    clock.now = 102.0
    processes.scan()
    assert asked == [{1234, 5678, 9999, 4321}]
    assert [(p.pid, p.name) for p in first] == [(1234, "1234"), (5678, "5678")]


@pytest.fixture
def windows_tab(qtbot, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A Monitor tab on the live /sys whose sampler opens the Windows sources (the fakes
    the test installs in source_factory), reading the host for real."""
    from functools import partial

    from rocmpanel.base.settings import Settings
    from rocmpanel.gui.context import AppContext
    from rocmpanel.jobs.runner import JobManager
    from rocmpanel.monitor import sampler
    from rocmpanel.monitor.views.tab import MonitorTab

    monkeypatch.delenv("ROCMPANEL_SYSFS_ROOT", raising=False)
    monkeypatch.delenv("ROCMPANEL_PROC_ROOT", raising=False)
    monkeypatch.setattr(
        sampler, "TelemetryCollector", partial(TelemetryCollector, platform="win32")
    )
    tabs: list[MonitorTab] = []

    def make() -> MonitorTab:
        settings = Settings()
        settings.monitor.interval_ms = 100
        tab = MonitorTab(AppContext(settings, JobManager(), lambda _: None), follow_inventory=False)
        qtbot.addWidget(tab)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        tab.shutdown()


def test_the_tab_says_why_the_windows_counters_cannot_start(
    windows_tab, monkeypatch: pytest.MonkeyPatch, qtbot
) -> None:  # type: ignore[no-untyped-def]
    def missing() -> PdhQuery:
        raise ModuleNotFoundError("No module named 'win32pdh'")

    monkeypatch.setattr(source_factory, "open_pdh_query", missing)
    monkeypatch.setattr(source_factory.sys, "executable", r"C:\Py\pythonw.exe")
    tab = windows_tab()
    qtbot.waitUntil(lambda: tab.no_gpu_label.text() != "", timeout=5000)
    assert tab.no_gpu_label.text() == (
        "Windows GPU counters need the pywin32 package, which is missing: run "
        r"`C:\Py\python.exe -m pip install pywin32` (or reinstall rocmpanel), then restart "
        "the panel. Host telemetry is still shown above."
    )
    assert tab.source_label.text() == "0 GPU(s) · none · live"


def test_the_process_table_shows_windows_rows_on_their_named_gpu(
    windows, windows_tab, monkeypatch: pytest.MonkeyPatch, qtbot
) -> None:  # type: ignore[no-untyped-def]
    pdh, _, _ = windows
    ticks = itertools.count(100.0, 1.0)  # a second passes at each look: the first tick reads
    monkeypatch.setattr(
        source_factory, "open_pdh_query", lambda: PdhQuery(pdh, lambda: next(ticks))
    )
    tab = windows_tab()
    model = tab.process_table.model_
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=5000)
    assert tab.source_label.text() == "1 GPU(s) · Windows PDH counters · live"
    table = [[model.data(model.index(r, c)) for c in range(7)] for r in range(2)]
    assert sorted(table) == [
        ["1234", "app1234.exe", "AMD Radeon RX 7900 XTX", "3 MiB", "n/a", "4.0", "pdh"],
        ["5678", "app5678.exe", "AMD Radeon RX 7900 XTX", "8,192 MiB", "64 MiB", "87.2", "pdh"],
    ]
    assert tab.process_label.text() == "Processes using a GPU (all users): 2"


def test_a_gpu_card_says_no_data_and_why_instead_of_old_figures(qtbot) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.monitor.views.gpu_plots import GpuHeader

    header = GpuHeader()
    qtbot.addWidget(header)
    header.show_sample(GpuSample(RADEON_IDENTITY, False, busy_percent=50.0))
    assert header.state.text() == "active" and header.figures.text().startswith(
        "Busy\u00a050\u00a0%"
    )
    reason = "no data: Windows GPU counters stopped answering: The data is not valid."
    header.show_sample(GpuSample(RADEON_IDENTITY, False, invalid=((NO_DATA, reason),)))
    assert header.state.text() == "no data"
    assert header.figures.text() == (
        "No data: Windows GPU counters stopped answering: The data is not valid."
    )
    assert header.name.text() == "AMD Radeon RX 7900 XTX"
    assert header.details.text() == "gfx1100  ·  0000:03:00.0"


def test_a_driver_reset_gives_a_new_luid_and_the_gpu_is_found_again(
    windows, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pdh, clock, adapters = windows
    collector = windows_collector(tmp_path, clock)
    clock.now = 101.0
    assert [g.identity for g in collector.collect().gpus] == [RADEON_IDENTITY]
    # After a reset (TDR) the card comes back under a new LUID: PDH shows it, DXGI too.
    moved = "luid_0x00000000_0x0000C9A1_phys_0"
    pdh.counters = {
        path: {name.replace(DGPU, moved): v for name, v in values.items()}
        for path, values in COUNTERS.items()
    }
    adapters[1] = DxgiAdapter(0, 0xC9A1, "AMD Radeon RX 7900 XTX", 0x1002, 0x744C, VRAM_TOTAL)
    clock.now = 102.0
    sample = collector.collect()
    assert [(g.identity, g.vram_total_bytes) for g in sample.gpus] == [
        (RADEON_IDENTITY, VRAM_TOTAL)
    ]
    assert {(p.pid, p.pci_slot) for p in sample.processes} == {(1234, SLOT), (5678, SLOT)}


def test_dxgi_is_asked_again_at_most_every_30_s_and_its_failure_keeps_the_names() -> None:
    pdh, clock = FakePdh(), Clock()
    calls: list[float] = []

    def relist() -> tuple[list[NamedAdapter], set[tuple[int, int]]]:
        calls.append(clock.now)
        raise OSError("DXGI_ERROR_DEVICE_REMOVED")

    named = [NamedAdapter((0, 0xC3B4), RADEON_IDENTITY, VRAM_TOTAL)]
    # Basic Render was listed (and left out): its counters never trigger a new listing.
    source = PdhGpuSource(PdhQuery(pdh, clock), named, listed={(0, 0xD0B5)}, relist=relist)
    clock.now = 101.0
    source.read()
    assert calls == []
    pdh.counters = {
        **COUNTERS,
        ADAPTER_DEDICATED: {DGPU: 1.0, "luid_0x00000000_0x0000AAAA_phys_0": 0},
    }
    for now in (102.0, 131.9, 132.0):
        clock.now = now
        source.read()
    assert calls == [102.0, 132.0]
    assert source.identities() == (RADEON_IDENTITY,)
