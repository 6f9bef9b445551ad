"""Read a Prometheus text page of GPU metrics into the Monitor's ``GpuSample`` records.

Two kinds of page are understood:

- AMD's GPU metrics exporter (ROCm/device-metrics-exporter). Names and units are those of
  its metrics list (docs/configuration/metricslist.md) and of the code that registers them
  (pkg/amdgpu/gpuagent/gpuagent_gpu_metrics.go), both read at commit
  0778d3ab4d66fce90f0ca846e114be1d976f3e35; resources/prometheus_metrics.yaml keeps the
  table with its sources. The exporter writes the field names in lower case
  (``GPU_GFX_ACTIVITY`` is ``gpu_gfx_activity``), memory in MB, power in W, temperatures
  in °C, clocks in MHz per ``clock_type``, and one series per GPU labelled ``gpu_id``
  (with ``hostname``, ``card_model``, ``serial_number``...). A deployment may prepend a
  prefix to every name (``CommonConfig.MetricsFieldPrefix``, e.g. ``amd_``): names are
  matched by their documented ending. "Not applicable" is written as 2^32-1; it reads as
  no value here.
- rocmpanel's own page (``rocmpanel telemetry --prometheus``, names in :data:`OWN_METRICS`,
  base units in the names as Prometheus asks).

Every figure goes through :func:`rocmpanel.monitor.ranges.check_gpu`, as local readings do.
Nothing escapes but :class:`PageError`, whose ``kind`` says what was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.units import MIB
from rocmpanel.monitor.ranges import check_gpu
from rocmpanel.monitor.sample import GpuIdentity, GpuSample

MAX_PAGE_BYTES = 8 * MIB  # a full exporter page of 8 GPUs is about 200 KiB
OWN_PREFIX = "rocmpanel_gpu_"
# The exporter writes math.MaxUint32 for a figure the GPU does not have (MaxUint64 for the
# 64-bit counters of amd-smi); only on its pages, where no real figure comes near them.
# The exporter's "not applicable": the largest 32- and 64-bit unsigned values.
NOT_APPLICABLE = (float(0xFFFF_FFFF), float(0xFFFF_FFFF_FFFF_FFFF))
EXPORTER_MB = MIB  # "in MB": amd-smi's MB, 2^20 bytes (see resources/prometheus_metrics.yaml)


class PageProblem(Enum):
    TOO_LARGE = "too large"
    NOT_TEXT = "not text"
    NOT_PROMETHEUS = "not a Prometheus page"
    NO_GPU_METRICS = "no GPU metrics"


class PageError(PanelError):
    """A page that could not be read; ``message`` says why in words."""

    def __init__(self, kind: PageProblem, message: str, detail: str = "") -> None:
        super().__init__(message, detail)
        self.kind = kind


@dataclass(frozen=True)
class RemoteGpu:
    """One GPU of a page: the sample, and what a ``GpuSample`` has no field for."""

    sample: GpuSample
    host: str | None = None  # the page's hostname label, when it has one
    ecc_correctable: int | None = None
    ecc_uncorrectable: int | None = None
    healthy: bool | None = None  # the exporter's gpu_health (1 healthy, 0 not)
    serial: str | None = None


@dataclass(frozen=True)
class PageReading:
    """What one page holds: ``source`` is "AMD GPU metrics exporter" or "rocmpanel"."""

    source: str
    gpus: tuple[RemoteGpu, ...]
    hosts: tuple[str, ...] = field(default=())


# -- rocmpanel's own names: (metric, GpuSample attribute, unit scale to the metric) ----
OWN_METRICS: tuple[tuple[str, str, float, str], ...] = (
    ("busy_percent", "busy_percent", 1.0, "GPU busy (graphics engine), percent"),
    ("memory_busy_percent", "mem_busy_percent", 1.0, "memory bandwidth in use, percent"),
    ("vram_used_bytes", "vram_used_bytes", 1.0, "VRAM in use, bytes"),
    ("vram_total_bytes", "vram_total_bytes", 1.0, "VRAM size, bytes"),
    ("gtt_used_bytes", "gtt_used_bytes", 1.0, "GTT (system memory mapped for the GPU) in use"),
    ("gtt_total_bytes", "gtt_total_bytes", 1.0, "GTT size, bytes"),
    ("edge_temperature_celsius", "temp_edge_c", 1.0, "edge temperature"),
    ("junction_temperature_celsius", "temp_junction_c", 1.0, "junction (hotspot) temperature"),
    ("memory_temperature_celsius", "temp_mem_c", 1.0, "memory temperature"),
    ("edge_temperature_crit_celsius", "crit_edge_c", 1.0, "edge temperature crit limit"),
    ("junction_temperature_crit_celsius", "crit_junction_c", 1.0, "junction crit limit"),
    ("memory_temperature_crit_celsius", "crit_mem_c", 1.0, "memory temperature crit limit"),
    ("power_watts", "power_w", 1.0, "board power"),
    ("power_cap_watts", "power_cap_w", 1.0, "power cap"),
    ("shader_clock_hertz", "sclk_mhz", 1e6, "shader clock (sclk)"),
    ("memory_clock_hertz", "mclk_mhz", 1e6, "memory clock (mclk)"),
    ("fan_speed_rpm", "fan_rpm", 1.0, "fan speed, revolutions per minute"),
    ("fan_duty_percent", "fan_percent", 1.0, "fan duty, percent of full speed"),
)
OWN_ASLEEP = "asleep"  # 1 while runtime-suspended (only memory figures are read then)
OWN_LABELS: tuple[str, ...] = ("gpu", "bdf", "name", "host")
# What is text, not a figure: one series of value 1 whose labels carry it ("" when unknown),
# so a node's header shows its gfx target, PCIe link and performance level as locally.
OWN_INFO = "info"
OWN_INFO_LABELS: tuple[str, ...] = ("gfx", "link", "perf_level")
_INT_ATTRS = {"vram_used_bytes", "vram_total_bytes", "gtt_used_bytes", "gtt_total_bytes",
              "vis_vram_used_bytes", "vis_vram_total_bytes", "fan_rpm"}  # fmt: skip

# -- AMD's exporter: documented name -> (GpuSample attribute, scale to our unit) ---------
EXPORTER_FIELDS: dict[str, tuple[str, float]] = {
    "gpu_gfx_activity": ("busy_percent", 1.0),
    "gpu_umc_activity": ("mem_busy_percent", 1.0),
    "gpu_used_vram": ("vram_used_bytes", EXPORTER_MB),
    "gpu_total_vram": ("vram_total_bytes", EXPORTER_MB),
    "gpu_used_visible_vram": ("vis_vram_used_bytes", EXPORTER_MB),
    "gpu_total_visible_vram": ("vis_vram_total_bytes", EXPORTER_MB),
    "gpu_used_gtt": ("gtt_used_bytes", EXPORTER_MB),
    "gpu_total_gtt": ("gtt_total_bytes", EXPORTER_MB),
    "gpu_edge_temperature": ("temp_edge_c", 1.0),
    "gpu_junction_temperature": ("temp_junction_c", 1.0),
    "gpu_memory_temperature": ("temp_mem_c", 1.0),
}
# Power: the first of these a GPU reports. GPU_POWER_USAGE is listed for MI2xx and MI3xx;
# GPU_PACKAGE_POWER (MI3xx) and GPU_AVERAGE_PACKAGE_POWER (MI2xx) are socket power.
EXPORTER_POWER = ("gpu_power_usage", "gpu_package_power", "gpu_average_package_power")
EXPORTER_CLOCK = "gpu_clock"  # labels clock_index, clock_type ("GPU_CLOCK_TYPE_" removed)
EXPORTER_CLOCK_TYPES = {"system": "sclk_mhz", "memory": "mclk_mhz"}
EXPORTER_ECC = {"gpu_ecc_correct_total": "ecc_correctable",
                "gpu_ecc_uncorrect_total": "ecc_uncorrectable"}  # fmt: skip
EXPORTER_HEALTH = "gpu_health"
EXPORTER_GPU_LABEL = "gpu_id"
_EXPORTER_NAMES = (*EXPORTER_FIELDS, *EXPORTER_POWER, EXPORTER_CLOCK, EXPORTER_HEALTH)
_EXPORTER_NAMES += tuple(EXPORTER_ECC)


def _value(raw: float, sentinels: tuple[float, ...] = ()) -> float | None:
    if math.isnan(raw) or math.isinf(raw) or raw in sentinels:
        return None
    return raw


def _set(figures: dict[str, Any], attr: str, value: float) -> None:
    figures[attr] = round(value) if attr in _INT_ATTRS else value


def _samples(text: str) -> tuple[list[tuple[str, dict[str, str], float]], set[str]]:
    """Every sample (name, labels, value), and the names of the families on the page
    (a family may have no sample: rocmpanel on a machine without a GPU)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: list[tuple[str, dict[str, str], float]] = []
    names: set[str] = set()
    try:
        for family in text_string_to_metric_families(text):
            names.add(family.name)
            for sample in family.samples:
                out.append((sample.name, dict(sample.labels), float(sample.value)))
    except Exception as exc:  # the parser raises ValueError, IndexError, TypeError...
        first = text.lstrip()[:1]
        if first == "<":
            message = translate(
                "prometheus_read",
                "The page is not Prometheus metrics (it looks like an HTML page).",
            )
        elif first in "{[":
            message = translate(
                "prometheus_read", "The page is not Prometheus metrics (it looks like JSON)."
            )
        else:
            message = translate(
                "prometheus_read", "The page is not Prometheus metrics (it looks like text)."
            )
        raise PageError(
            PageProblem.NOT_PROMETHEUS,
            message,
            f"{type(exc).__name__}: {exc}",
        ) from exc
    return out, names


def decode_page(data: bytes) -> str:
    """The page as text; PageError when it is too large or not UTF-8."""
    if len(data) > MAX_PAGE_BYTES:
        raise PageError(
            PageProblem.TOO_LARGE,
            translate(
                "prometheus_read",
                "The page is larger than {size} MiB; a metrics page of a few GPUs is a few "
                "hundred KiB, so this is not one.",
            ).format(size=MAX_PAGE_BYTES // MIB),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PageError(
            PageProblem.NOT_TEXT,
            translate("prometheus_read", "The page is not UTF-8 text."),
            str(exc),
        ) from exc


def read_page(data: bytes | str) -> PageReading:
    """The GPUs on a page (AMD's exporter or rocmpanel's); PageError and nothing else."""
    try:
        text = decode_page(data) if isinstance(data, bytes) else data
        if len(text) > MAX_PAGE_BYTES:
            decode_page(text.encode("utf-8", "replace"))
        samples, families = _samples(text)
        if any(name.startswith(OWN_PREFIX) for name in families):
            reading = _read_own(samples)
        else:
            reading = _read_exporter(samples)
    except PageError:
        raise
    except Exception as exc:  # a bug here must still reach the user as a sentence
        raise PageError(
            PageProblem.NOT_PROMETHEUS,
            translate("prometheus_read", "The page could not be read ({error}).").format(error=exc),
            repr(exc),
        ) from exc
    if not reading.gpus and reading.source == "rocmpanel":
        raise PageError(
            PageProblem.NO_GPU_METRICS,
            translate(
                "prometheus_read",
                "The node runs rocmpanel but has no AMD GPU to report (its Monitor says why).",
            ),
        )
    if not reading.gpus:
        raise PageError(
            PageProblem.NO_GPU_METRICS,
            translate(
                "prometheus_read",
                "The page is Prometheus metrics but has no GPU metrics of AMD's GPU metrics "
                "exporter or of rocmpanel on it (is it the right port?).",
            ),
        )
    return reading


# -- rocmpanel's page ---------------------------------------------------------------------
def _read_own(samples: list[tuple[str, dict[str, str], float]]) -> PageReading:
    by_metric = {OWN_PREFIX + metric: (attr, scale) for metric, attr, scale, _ in OWN_METRICS}
    gpus: dict[tuple[str, str], dict[str, Any]] = {}
    labels_of: dict[tuple[str, str], dict[str, str]] = {}
    for name, labels, raw in samples:
        if not name.startswith(OWN_PREFIX):
            continue
        slot = (labels.get("host", ""), labels.get("gpu", ""))
        figures = gpus.setdefault(slot, {})
        labels_of.setdefault(slot, labels)
        value = _value(raw)
        if name == OWN_PREFIX + OWN_ASLEEP:
            figures["asleep"] = bool(value)
        elif name == OWN_PREFIX + OWN_INFO:
            for label in OWN_INFO_LABELS:
                if labels.get(label):
                    figures[label] = labels[label]
        elif name in by_metric and value is not None:
            attr, scale = by_metric[name]
            _set(figures, attr, value / scale)
    out = []
    for slot in sorted(gpus, key=_gpu_order):
        labels = labels_of[slot]
        bdf = labels.get("bdf") or None
        key = bdf or f"gpu{slot[1]}"
        name = labels.get("name") or f"GPU {slot[1]}"
        figures = gpus[slot]
        gfx = figures.pop("gfx", None)
        identity = GpuIdentity(key=key, card=None, pci_slot=bdf, pci_id=None, name=name, gfx=gfx)
        asleep = bool(figures.pop("asleep", False))
        sample = check_gpu(GpuSample(identity=identity, asleep=asleep, **figures))
        out.append(RemoteGpu(sample, host=slot[0] or None))
    return PageReading("rocmpanel", tuple(out), _hosts(out))


def _gpu_order(slot: tuple[str, str]) -> tuple[str, int, str]:
    host, index = slot
    return (host, int(index) if index.isdigit() else 1 << 30, index)


def _hosts(gpus: Iterable[RemoteGpu]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(g.host for g in gpus if g.host))


# -- AMD's exporter -----------------------------------------------------------------------
def _prefix_of(samples: list[tuple[str, dict[str, str], float]]) -> str | None:
    """The prefix the deployment put before every name ("" for none), found from the
    first sample named like a documented metric and labelled with a GPU."""
    for name, labels, _ in samples:
        if EXPORTER_GPU_LABEL not in labels:
            continue
        for known in _EXPORTER_NAMES:
            if name.endswith(known):
                return name[: -len(known)]
    return None


def _read_exporter(samples: list[tuple[str, dict[str, str], float]]) -> PageReading:
    prefix = _prefix_of(samples)
    if prefix is None:
        return PageReading("AMD GPU metrics exporter", ())
    gpus: dict[tuple[str, str], dict[str, Any]] = {}
    extra: dict[tuple[str, str], dict[str, Any]] = {}
    labels_of: dict[tuple[str, str], dict[str, str]] = {}
    power: dict[tuple[str, str], dict[str, float]] = {}
    clocks: dict[tuple[str, str], dict[str, tuple[int, float]]] = {}
    for full, labels, raw in samples:
        if not full.startswith(prefix) or EXPORTER_GPU_LABEL not in labels:
            continue
        name = full[len(prefix) :]
        slot = (labels.get("hostname", ""), labels[EXPORTER_GPU_LABEL])
        value = _value(raw, NOT_APPLICABLE)
        if name not in _EXPORTER_NAMES:
            continue
        labels_of.setdefault(slot, labels)
        figures = gpus.setdefault(slot, {})
        if value is None:
            continue
        if name in EXPORTER_FIELDS:
            attr, scale = EXPORTER_FIELDS[name]
            _set(figures, attr, value * scale)
        elif name in EXPORTER_POWER:
            power.setdefault(slot, {})[name] = value
        elif name == EXPORTER_CLOCK:
            _clock(clocks.setdefault(slot, {}), labels, value)
        elif name in EXPORTER_ECC:
            extra.setdefault(slot, {})[EXPORTER_ECC[name]] = int(value)
        elif name == EXPORTER_HEALTH:
            extra.setdefault(slot, {})["healthy"] = value >= 1
    out = []
    for slot in sorted(gpus, key=_gpu_order):
        figures = gpus[slot]
        watts = power.get(slot, {})
        chosen = next((watts[n] for n in EXPORTER_POWER if n in watts), None)
        if chosen is not None:
            figures["power_w"] = chosen
        for attr, (_, mhz) in clocks.get(slot, {}).items():
            figures[attr] = mhz
        labels = labels_of[slot]
        identity = GpuIdentity(
            key=f"gpu{slot[1]}",
            card=None,
            pci_slot=None,  # the exporter's default labels carry no PCI address
            pci_id=None,
            name=_exporter_name(labels, slot[1]),
        )
        sample = check_gpu(GpuSample(identity=identity, asleep=False, **figures))
        out.append(
            RemoteGpu(
                sample,
                host=slot[0] or None,
                serial=labels.get("serial_number") or None,
                **extra.get(slot, {}),
            )
        )
    return PageReading("AMD GPU metrics exporter", tuple(out), _hosts(out))


def _clock(seen: dict[str, tuple[int, float]], labels: dict[str, str], mhz: float) -> None:
    """Keep the lowest ``clock_index`` of each clock type we show (a GPU lists one clock
    per XCD or per memory controller: the first stands for them)."""
    kind = labels.get("clock_type", "").lower().removeprefix("gpu_clock_type_")
    attr = EXPORTER_CLOCK_TYPES.get(kind)
    if attr is None:
        return
    index_text = labels.get("clock_index", "0")
    index = int(index_text) if index_text.isdigit() else 1 << 30
    if attr not in seen or index < seen[attr][0]:
        seen[attr] = (index, mhz)


def _exporter_name(labels: dict[str, str], gpu_id: str) -> str:
    model = labels.get("card_series") or labels.get("card_model") or "AMD GPU"
    return f"{model} (GPU {gpu_id})"


def with_node(gpu: RemoteGpu, node: str, many_hosts: bool) -> RemoteGpu:
    """``gpu`` keyed and named for the Nodes view: ``node/gpu0``, "… on node"; with
    several hosts on one page (a federating Prometheus) the host joins the key."""
    ident = gpu.sample.identity
    where = f"{node}/{gpu.host}" if many_hosts and gpu.host else node
    named = replace(ident, key=f"{where}/{ident.key}", name=f"{ident.name} on {where}")
    return replace(gpu, sample=replace(gpu.sample, identity=named))
