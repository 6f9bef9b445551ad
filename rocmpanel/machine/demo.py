"""Demo mode's machine: recorded GPUs rebuilt as a sysfs tree, with a replayed workload.

``rocmpanel --demo`` runs the whole panel on GPUs that are not this machine's. Their facts
(``resources/demo/recording.json``, made by ``scripts/make_demo_recording.py`` from recorded
sysfs trees of real cards; each GPU names its source) become a /sys-like tree in a temporary
folder: ``class/drm/cardN/device`` with its hwmon folder, and a KFD topology node per GPU
whose ``gfx_target_version`` makes the gfx target exact. The real detection and the real
telemetry source read that tree, so Setup, Monitor and the other tabs run their own code.

The workload is a deterministic function of time (:func:`state_at`): load spikes, VRAM
filling up and freeing, temperatures rising with load and falling, power following load,
clocks switching dpm levels, the fan following the temperature. :class:`DemoReplay` writes
it into the tree once per period; the Monitor's history of the past minutes is the same
function at past times (``monitor/demo_replay.py``).

:class:`DemoSession` owns the temporary folder: the tree, an empty proc tree and a fresh
``ROCMPANEL_HOME`` (settings, database, environments), all removed at exit, so the demo
never changes this machine.

This module imports the standard library and ``rocmpanel.base`` only (``machine`` layer).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmpanel.base.resources import read_resource

if TYPE_CHECKING:  # detection is imported when the demo's inventory is detected
    from rocmpanel.machine.inventory import Inventory

RECORDING = "demo/recording.json"
TITLE = "DEMO: recorded GPUs, not this machine"
PERIOD_S = 0.5  # how often the replay writes the tree (the Monitor's default interval)
CYCLE_S = 180.0  # one workload cycle: idle, model load, generation bursts, unload
SMOOTH_S = 30.0  # the thermal lag: temperatures follow the load of the last half minute


@dataclass(frozen=True)
class TempSensor:
    label: str  # edge / junction / mem
    idle_mc: int
    crit_mc: int | None
    emergency_mc: int | None


@dataclass(frozen=True)
class DemoGpu:
    """One recorded GPU's facts (units as sysfs writes them: bytes, m°C, µW, MHz)."""

    name: str
    source: str
    pci_id: str  # "1002:744c"
    subsystem_id: str
    slot: str  # "0000:03:00.0"
    gfx_target_version: int
    simd_count: int
    vram_total: int
    gtt_total: int
    vbios: str
    link_speed: str
    link_width: int
    temps: tuple[TempSensor, ...]
    idle_power_uw: int
    power_cap_uw: int
    power_cap_min_uw: int | None
    power_cap_max_uw: int | None
    sclk_levels_mhz: tuple[int, ...]
    mclk_levels_mhz: tuple[int, ...]
    fan_max_rpm: int
    pwm_max: int
    perf_level: str


@dataclass(frozen=True)
class Recording:
    """The demo's GPUs and the ROCm version its verdicts assume."""

    gpus: tuple[DemoGpu, ...]
    rocm_version: str
    rocm_note: str


def _gpu(raw: Mapping[str, Any]) -> DemoGpu:
    return DemoGpu(
        name=str(raw["name"]),
        source=str(raw["source"]),
        pci_id=str(raw["pci_id"]),
        subsystem_id=str(raw.get("subsystem_id") or ""),
        slot=str(raw["slot"]),
        gfx_target_version=int(raw["gfx_target_version"]),
        simd_count=int(raw["simd_count"]),
        vram_total=int(raw["vram_total"]),
        gtt_total=int(raw["gtt_total"]),
        vbios=str(raw["vbios"]),
        link_speed=str(raw["link_speed"]),
        link_width=int(raw["link_width"]),
        temps=tuple(
            TempSensor(str(t["label"]), int(t["idle_mc"]), t.get("crit_mc"), t.get("emergency_mc"))
            for t in raw["temps"]
        ),
        idle_power_uw=int(raw["idle_power_uw"]),
        power_cap_uw=int(raw["power_cap_uw"]),
        power_cap_min_uw=raw.get("power_cap_min_uw"),
        power_cap_max_uw=raw.get("power_cap_max_uw"),
        sclk_levels_mhz=tuple(int(v) for v in raw["sclk_levels_mhz"]),
        mclk_levels_mhz=tuple(int(v) for v in raw["mclk_levels_mhz"]),
        fan_max_rpm=int(raw["fan_max_rpm"]),
        pwm_max=int(raw.get("pwm_max") or 255),
        perf_level=str(raw.get("perf_level") or "auto"),
    )


def load_recording(text: str | None = None) -> Recording:
    """The bundled recording (or ``text``, its JSON). Raises OSError when the file is
    missing or unreadable, ValueError (one sentence, with the fix) when it is damaged."""
    data = read_resource(RECORDING) if text is None else text
    try:
        raw = json.loads(data)
        recording = Recording(
            gpus=tuple(_gpu(g) for g in raw["gpus"]),
            rocm_version=str(raw["rocm_version"]),
            rocm_note=str(raw.get("rocm_note") or ""),
        )
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        raise ValueError(
            f"{RECORDING} is damaged ({what[:120]}); reinstalling rocmpanel restores it"
        ) from None
    if not recording.gpus:
        raise ValueError(f"{RECORDING} lists no GPU; reinstalling rocmpanel restores it")
    return recording


# -- the workload timeline: a pure function of time --------------------------------------


@dataclass(frozen=True)
class GpuState:
    """What the files of one GPU say at one moment."""

    busy_percent: int
    mem_busy_percent: int
    vram_used: int
    gtt_used: int
    temps_mc: tuple[int, ...]  # in the order of DemoGpu.temps
    power_uw: int
    sclk_level: int  # index into sclk_levels_mhz
    mclk_level: int
    fan_rpm: int
    pwm: int


def _phase(t: float, index: int) -> float:
    """Seconds into the workload cycle; the second GPU runs a third of a cycle later."""
    return (t - index * CYCLE_S / 3.0) % CYCLE_S


def load_at(t: float, index: int) -> float:
    """GPU load (0..1) at Unix time ``t``: idle, a model loading (20-40 s), generation
    bursts of 8 s every 12 s until 150 s, then idle again."""
    p = _phase(t, index)
    if p < 20.0 or p >= 150.0:
        return 0.02
    if p < 40.0:
        return 0.35  # loading: copies and a little compute
    return 0.97 if (p - 40.0) % 12.0 < 8.0 else 0.12


def vram_fraction_at(t: float, index: int) -> float:
    """Share of VRAM in use: a base, filling while the model loads, freed at unload."""
    p = _phase(t, index)
    base = 0.04
    model = 0.62 if index == 0 else 0.48
    if p < 20.0 or p >= 155.0:
        return base
    if p < 40.0:
        return base + model * (p - 20.0) / 20.0
    if p >= 150.0:
        return base + model * (155.0 - p) / 5.0
    return base + model


def smoothed_load(t: float, index: int, steps: int = 15) -> float:
    """The load of the last SMOOTH_S seconds, newer seconds weighing more (the thermal lag)."""
    total = weight_sum = 0.0
    for k in range(steps):
        weight = math.exp(-k / (steps / 3.0))
        total += weight * load_at(t - k * SMOOTH_S / steps, index)
        weight_sum += weight
    return total / weight_sum


def _dpm_index(levels: tuple[int, ...], load: float) -> int:
    """Deep sleep (the lowest level) at idle, the first other level under light load, the
    highest level under heavy load."""
    if not levels:
        return 0
    ordered = sorted(range(len(levels)), key=lambda i: levels[i])
    if load < 0.05:
        return ordered[0]
    if load < 0.5:
        return ordered[min(1, len(ordered) - 1)]
    return ordered[-1]


def state_at(gpu: DemoGpu, index: int, t: float) -> GpuState:
    """What ``gpu`` (the ``index``-th of the recording) reads at Unix time ``t``."""
    load = load_at(t, index)
    heat = smoothed_load(t, index)
    temps = []
    for sensor in gpu.temps:
        crit = sensor.crit_mc or 100_000
        # Rise towards 25 °C under the critical limit at full load.
        hot = max(sensor.idle_mc, crit - 25_000)
        temps.append(int(round(sensor.idle_mc + (hot - sensor.idle_mc) * heat, -3)))
    by_label = {sensor.label: value for sensor, value in zip(gpu.temps, temps, strict=True)}
    junction = by_label.get("junction", max(temps, default=0))
    # Zero-rpm fan below 65 °C junction, then up to 80 % of the maximum at 95 °C.
    share = min(max((junction - 65_000) / 30_000, 0.0), 1.0)
    fan = int(round(share * 0.8 * gpu.fan_max_rpm, -1)) if share > 0 else 0
    pwm = round(fan / gpu.fan_max_rpm * gpu.pwm_max) if gpu.fan_max_rpm else 0
    power = gpu.idle_power_uw + (0.96 * gpu.power_cap_uw - gpu.idle_power_uw) * load
    return GpuState(
        busy_percent=round(load * 100),
        mem_busy_percent=round(load * 45),
        vram_used=int(gpu.vram_total * vram_fraction_at(t, index)) // 4096 * 4096,
        gtt_used=int(gpu.gtt_total * (0.004 + 0.02 * (load > 0.3))) // 4096 * 4096,
        temps_mc=tuple(temps),
        power_uw=int(round(power, -6)),
        sclk_level=_dpm_index(gpu.sclk_levels_mhz, load),
        mclk_level=_dpm_index(gpu.mclk_levels_mhz, max(load, 0.1 if load > 0.02 else 0.0)),
        fan_rpm=fan,
        pwm=pwm,
    )


# -- the tree ------------------------------------------------------------------------------


def _write_file(path: Path, text: str, atomic: bool = True) -> None:
    """Write one file; ``atomic``: replace it whole, so a reader on another thread never
    sees half of it (a private tree read on the same thread needs no such care)."""
    if not atomic:
        with open(path, "w", encoding="ascii") as handle:
            handle.write(text + "\n")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(text + "\n", encoding="ascii")
    os.replace(temp, path)


def device_dir(root: Path, index: int) -> Path:
    return root / "class" / "drm" / f"card{index}" / "device"


def _hwmon_dir(root: Path, index: int) -> Path:
    return device_dir(root, index) / "hwmon" / f"hwmon{index + 2}"


def _location_id(slot: str) -> int:
    """KFD's location_id for a PCI slot: bus << 8 | device << 3 | function."""
    _domain, bus, rest = slot.split(":")
    device, function = rest.split(".")
    return int(bus, 16) << 8 | int(device, 16) << 3 | int(function)


def _dpm_table(levels: tuple[int, ...], current: int) -> str:
    return "\n".join(f"{i}: {mhz}Mhz{' *' if i == current else ''}" for i, mhz in enumerate(levels))


def build_tree(root: Path, recording: Recording, t: float | None = None) -> Path:
    """Write the /sys-like tree of ``recording`` under ``root`` (the files that never change,
    then the state at ``t``, default now); returns ``root``."""
    for index, gpu in enumerate(recording.gpus):
        dev = device_dir(root, index)
        vendor, device = gpu.pci_id.split(":")
        sub_vendor, _, sub_device = gpu.subsystem_id.partition(":")
        _write_file(
            dev / "uevent",
            "\n".join(
                (
                    "DRIVER=amdgpu",
                    "PCI_CLASS=30000",
                    f"PCI_ID={gpu.pci_id.upper()}",
                    f"PCI_SUBSYS_ID={gpu.subsystem_id.upper()}",
                    f"PCI_SLOT_NAME={gpu.slot}",
                )
            ),
        )
        _write_file(dev / "vendor", f"0x{vendor}")
        _write_file(dev / "device", f"0x{device}")
        if sub_vendor:
            _write_file(dev / "subsystem_vendor", f"0x{sub_vendor}")
            _write_file(dev / "subsystem_device", f"0x{sub_device}")
        _write_file(dev / "class", "0x030000")
        _write_file(dev / "vbios_version", gpu.vbios)
        _write_file(dev / "current_link_speed", gpu.link_speed)
        _write_file(dev / "current_link_width", str(gpu.link_width))
        _write_file(dev / "mem_info_vram_total", str(gpu.vram_total))
        _write_file(dev / "mem_info_gtt_total", str(gpu.gtt_total))
        _write_file(dev / "power_dpm_force_performance_level", gpu.perf_level)
        _write_file(dev / "power" / "runtime_status", "active")
        hwmon = _hwmon_dir(root, index)
        _write_file(hwmon / "name", "amdgpu")
        for number, sensor in enumerate(gpu.temps, start=1):
            _write_file(hwmon / f"temp{number}_label", sensor.label)
            if sensor.crit_mc is not None:
                _write_file(hwmon / f"temp{number}_crit", str(sensor.crit_mc))
            if sensor.emergency_mc is not None:
                _write_file(hwmon / f"temp{number}_emergency", str(sensor.emergency_mc))
        _write_file(hwmon / "power1_cap", str(gpu.power_cap_uw))
        if gpu.power_cap_min_uw is not None:
            _write_file(hwmon / "power1_cap_min", str(gpu.power_cap_min_uw))
        if gpu.power_cap_max_uw is not None:
            _write_file(hwmon / "power1_cap_max", str(gpu.power_cap_max_uw))
        _write_file(hwmon / "freq1_label", "sclk")
        _write_file(hwmon / "freq2_label", "mclk")
        _write_file(hwmon / "fan1_max", str(gpu.fan_max_rpm))
        _write_file(hwmon / "pwm1_max", str(gpu.pwm_max))
        _write_file(hwmon / "pwm1_enable", "2")
        # KFD: node 0 is the CPU; each GPU a node whose gfx_target_version names its target.
        node = root / "class" / "kfd" / "kfd" / "topology" / "nodes" / str(index + 1)
        _write_file(
            node / "properties",
            "\n".join(
                (
                    "cpu_cores_count 0",
                    f"simd_count {gpu.simd_count}",
                    f"gfx_target_version {gpu.gfx_target_version}",
                    f"vendor_id {int(vendor, 16)}",
                    f"device_id {int(device, 16)}",
                    f"location_id {_location_id(gpu.slot)}",
                    f"domain {int(gpu.slot.split(':')[0], 16)}",
                    f"drm_render_minor {128 + index}",
                )
            ),
        )
        _write_file(node / "gpu_id", str(4242 + index))
        _write_file(
            node / "mem_banks" / "0" / "properties",
            f"heap_type 1\nsize_in_bytes {gpu.vram_total}",
        )
    cpu = root / "class" / "kfd" / "kfd" / "topology" / "nodes" / "0"
    _write_file(cpu / "properties", "cpu_cores_count 16\nsimd_count 0")
    write_state(root, recording, time.time() if t is None else t)
    return root


def write_state(
    root: Path,
    recording: Recording,
    t: float,
    *,
    atomic: bool = True,
    cache: dict[Path, str] | None = None,
) -> None:
    """Write the readings of Unix time ``t`` into the tree (the files that change);
    ``atomic=False`` for a tree no other thread reads; ``cache``: what the previous calls
    wrote, so a file whose text is the same is not written again (both for speed)."""
    written: dict[Path, str] = {} if cache is None else cache

    def _write(path: Path, text: str, atomic: bool) -> None:
        if written.get(path) != text:
            _write_file(path, text, atomic)
            written[path] = text

    for index, gpu in enumerate(recording.gpus):
        state = state_at(gpu, index, t)
        dev = device_dir(root, index)
        hwmon = _hwmon_dir(root, index)
        _write(dev / "gpu_busy_percent", str(state.busy_percent), atomic)
        _write(dev / "mem_busy_percent", str(state.mem_busy_percent), atomic)
        _write(dev / "mem_info_vram_used", str(state.vram_used), atomic)
        _write(dev / "mem_info_gtt_used", str(state.gtt_used), atomic)
        _write(dev / "pp_dpm_sclk", _dpm_table(gpu.sclk_levels_mhz, state.sclk_level), atomic)
        _write(dev / "pp_dpm_mclk", _dpm_table(gpu.mclk_levels_mhz, state.mclk_level), atomic)
        for number, value in enumerate(state.temps_mc, start=1):
            _write(hwmon / f"temp{number}_input", str(value), atomic)
        _write(hwmon / "power1_average", str(state.power_uw), atomic)
        sclk = gpu.sclk_levels_mhz[state.sclk_level] if gpu.sclk_levels_mhz else 0
        mclk = gpu.mclk_levels_mhz[state.mclk_level] if gpu.mclk_levels_mhz else 0
        _write(hwmon / "freq1_input", str(sclk * 1_000_000), atomic)
        _write(hwmon / "freq2_input", str(mclk * 1_000_000), atomic)
        _write(hwmon / "fan1_input", str(state.fan_rpm), atomic)
        _write(hwmon / "pwm1", str(state.pwm), atomic)


class DemoReplay:
    """A daemon thread that writes the timeline into the tree every ``period_s``."""

    def __init__(
        self,
        root: Path,
        recording: Recording,
        period_s: float = PERIOD_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.root = root
        self.recording = recording
        self.period_s = period_s
        self._clock = clock
        self._stop = threading.Event()
        self._written: dict[Path, str] = {}
        self._thread = threading.Thread(target=self._run, name="rocmpanel-demo", daemon=True)

    def start(self) -> None:
        # Readable before the first tick.
        write_state(self.root, self.recording, self._clock(), cache=self._written)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                write_state(self.root, self.recording, self._clock(), cache=self._written)
            except OSError:  # the folder is being removed at exit
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)


class DemoSession:
    """The demo's temporary folder: ``sys/`` (the tree), ``proc/`` (empty: no process of
    this machine is listed), ``home/`` (ROCMPANEL_HOME). ``close()`` removes it."""

    def __init__(self, base: Path | None = None, recording: Recording | None = None) -> None:
        self.recording = recording or load_recording()
        self.folder = Path(tempfile.mkdtemp(prefix="rocmpanel-demo-", dir=base))
        self.sysfs_root = self.folder / "sys"
        self.proc_root = self.folder / "proc"
        self.home = self.folder / "home"
        try:
            for path in (self.sysfs_root, self.proc_root, self.home):
                path.mkdir()
            build_tree(self.sysfs_root, self.recording)
        except BaseException:  # a full disk, a damaged value: leave no folder behind
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.replay = DemoReplay(self.sysfs_root, self.recording)
        self.replay.start()

    def environ(self) -> dict[str, str]:
        """The variables that point the panel (and its jobs) at the demo's folders."""
        return {
            "ROCMPANEL_HOME": str(self.home),
            "ROCMPANEL_SYSFS_ROOT": str(self.sysfs_root),
            "ROCMPANEL_PROC_ROOT": str(self.proc_root),
        }

    def close(self) -> None:
        self.replay.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def demo_inventory_facts(recording: Recording) -> dict[str, str]:
    """What the demo's inventory says instead of this machine's: the ROCm version the
    verdicts assume and an OS line that says it is a recording."""
    return {
        "rocm_version": recording.rocm_version,
        "os_version": f"demo: recorded GPUs; ROCm {recording.rocm_version} {recording.rocm_note}",
    }


def detect_demo_inventory(sysfs_root: Path, recording: Recording) -> Inventory:
    """The demo tree detected as a machine, with the recording's ROCm version for the
    verdicts (no tool of this machine runs: the tree is not /sys)."""
    from dataclasses import replace

    from rocmpanel.machine.inventory import detect_inventory

    found = detect_inventory({}, sysfs_root=sysfs_root)
    facts = demo_inventory_facts(recording)
    system = replace(
        found.system, rocm_version=facts["rocm_version"], os_version=facts["os_version"]
    )
    return replace(found, system=system)
