"""Per-process GPU use from DRM fdinfo and the KFD process directory.

``/proc/<pid>/fdinfo/<fd>`` of an amdgpu file carries ``drm-pdev``, ``drm-client-id``,
``drm-engine-<name>: N ns`` and ``drm-memory-*``/``drm-resident-*`` sizes. One DRM client
can be reachable from several fds and processes (dup, fork), so clients are counted once
by (pdev, client-id), for the lowest pid that holds them. ROCm compute queues do not show
in fdinfo engines, so ``/sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>`` adds their VRAM.
Processes of other users are skipped without a word (their fdinfo is not ours to read).

Which fds of a process are DRM files is found by ``readlink`` and remembered; each
process's fd listing is redone every ``rescan_s`` seconds (staggered, so a sixteenth of
the processes per slice of the period) and at once for new processes, so a steady tick
reads only the fdinfo files that matter.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.base.units import GIB, KIB, MIB
from rocmpanel.machine.kfd_topology import read_nodes
from rocmpanel.machine.sysfs import printable, read_int, read_text
from rocmpanel.monitor.sample import ProcessSample

_UNITS = {"": 1, "B": 1, "KiB": KIB, "MiB": MIB, "GiB": GIB}
_DRM_PREFIXES = ("/dev/dri/renderD", "/dev/dri/card")


@dataclass(frozen=True)
class DrmClient:
    """One amdgpu DRM client as one fdinfo file describes it."""

    pdev: str
    client_id: str
    engines_ns: Mapping[str, int]
    vram_bytes: int | None
    gtt_bytes: int | None


def _size(value: str) -> int | None:
    parts = value.split()
    if not parts:
        return None
    try:
        number = int(parts[0])
    except ValueError:
        return None
    unit = _UNITS.get(parts[1] if len(parts) > 1 else "")
    return number * unit if unit is not None else None


def parse_fdinfo(text: str) -> DrmClient | None:
    """An amdgpu fdinfo file, or None when it is not one (other drivers, plain files)."""
    keys: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith("drm-"):
            keys[key] = value.strip()
    if keys.get("drm-driver") != "amdgpu" or "drm-client-id" not in keys:
        return None
    engines: dict[str, int] = {}
    for key, value in keys.items():
        if key.startswith("drm-engine-") and not key.startswith("drm-engine-capacity-"):
            ns = value.split()[0] if value else ""
            if ns.isdigit():
                engines[key.removeprefix("drm-engine-")] = int(ns)

    def memory(region: str) -> int | None:
        # Newer kernels say drm-resident-<region>; older amdgpu said drm-memory-<region>.
        for prefix in ("drm-resident-", "drm-memory-"):
            if prefix + region in keys:
                return _size(keys[prefix + region])
        return None

    return DrmClient(
        pdev=keys.get("drm-pdev", ""),
        client_id=keys["drm-client-id"],
        engines_ns=engines,
        vram_bytes=memory("vram"),
        gtt_bytes=memory("gtt"),
    )


@dataclass
class _Known:
    """What the scanner remembers about a process between ticks."""

    drm_fds: list[str]
    listed_at: float


@dataclass
class _Usage:
    vram: int | None = None
    gtt: int | None = None
    engines: dict[str, float] = field(default_factory=dict)
    sources: set[str] = field(default_factory=set)


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


class FdinfoScanner:
    """The Linux :class:`~rocmpanel.monitor.source.ProcessSource`: scans a /proc-like tree
    each tick; keeps engine counters to turn ns into percent."""

    name = "drm fdinfo + kfd"
    min_interval_s = 0.0

    def __init__(
        self,
        proc_root: Path | str = "/proc",
        sysfs_root: Path | str = "/sys",
        *,
        uid: int | None = None,
        rescan_s: float = 5.0,
    ) -> None:
        self.proc_root = str(proc_root)
        self.sysfs_root = Path(sysfs_root)
        self.uid = os.getuid() if uid is None and hasattr(os, "getuid") else uid
        self.rescan_s = rescan_s
        self._known: dict[int, _Known] = {}
        self._last_engines: dict[tuple[str, str], tuple[float, Mapping[str, int]]] = {}
        self._kfd_slots: dict[int, str | None] | None = None

    def close(self) -> None:
        return None  # nothing is held open between scans

    def _owned(self, pid_dir: str) -> bool:
        if self.uid is None or self.uid == 0:
            return True
        try:
            return os.stat(pid_dir).st_uid == self.uid
        except OSError:
            return False

    def _drm_fds(self, pid_dir: str) -> list[str]:
        # readlink relative to an open fd/ directory: no path walk per descriptor.
        try:
            dir_fd = os.open(pid_dir + "/fd", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return []
        found = []
        try:
            for name in os.listdir(dir_fd):
                try:
                    target = os.readlink(name, dir_fd=dir_fd)
                except OSError:
                    continue
                if target.startswith(_DRM_PREFIXES):
                    found.append(name)
        except OSError:
            return []
        finally:
            os.close(dir_fd)
        return found

    def _pids(self) -> list[int]:
        try:
            return sorted(int(n) for n in os.listdir(self.proc_root) if n.isdigit())
        except OSError:
            return []

    def scan(
        self, worker_pids: Mapping[int, str] | None = None, now: float | None = None
    ) -> tuple[ProcessSample, ...]:
        """Every process of ours that holds amdgpu memory or engine time, one row per GPU."""
        now = time.monotonic() if now is None else now
        workers = worker_pids or {}
        seen_clients: set[tuple[str, str]] = set()
        engines_now: dict[tuple[str, str], tuple[float, Mapping[str, int]]] = {}
        usage: dict[tuple[int, str | None], _Usage] = {}
        pids = self._pids()
        alive = set(pids)
        for pid in list(self._known):
            if pid not in alive:
                del self._known[pid]
        for pid in pids:
            pid_dir = f"{self.proc_root}/{pid}"
            known = self._known.get(pid)
            if known is None or now - known.listed_at >= self.rescan_s:
                if not self._owned(pid_dir):
                    continue
                listed_at = now
                if known is None:
                    # Spread later rescans over the period instead of all in one tick.
                    listed_at -= (pid % 16) * self.rescan_s / 16
                known = _Known(self._drm_fds(pid_dir), listed_at)
                self._known[pid] = known
            for fd in known.drm_fds:
                text = read_text(f"{pid_dir}/fdinfo/{fd}")
                client = parse_fdinfo(text) if text else None
                if client is None:
                    continue
                key = (client.pdev, client.client_id)
                if key in seen_clients:
                    continue
                seen_clients.add(key)
                row = usage.setdefault((pid, client.pdev or None), _Usage())
                row.sources.add("fdinfo")
                row.vram = _add(row.vram, client.vram_bytes)
                row.gtt = _add(row.gtt, client.gtt_bytes)
                engines_now[key] = (now, client.engines_ns)
                previous = self._last_engines.get(key)
                if previous is not None and now > previous[0]:
                    elapsed_ns = (now - previous[0]) * 1e9
                    for engine, ns in client.engines_ns.items():
                        delta = ns - previous[1].get(engine, ns)
                        pct = min(100.0, max(0.0, 100.0 * delta / elapsed_ns))
                        row.engines[engine] = row.engines.get(engine, 0.0) + pct
        self._last_engines = engines_now
        self._add_kfd(usage, alive)
        return tuple(self._rows(usage, workers))

    def _add_kfd(self, usage: dict[tuple[int, str | None], _Usage], alive: set[int]) -> None:
        kfd_proc = self.sysfs_root / "class" / "kfd" / "kfd" / "proc"
        try:
            pids = [int(n) for n in os.listdir(kfd_proc) if n.isdigit()]
        except OSError:
            return
        if self._kfd_slots is None:
            self._kfd_slots = {n.gpu_id: n.bdf for n in read_nodes(self.sysfs_root) if n.gpu_id}
        for pid in pids:
            if pid not in alive or not self._owned(f"{self.proc_root}/{pid}"):
                continue
            try:
                names = os.listdir(kfd_proc / str(pid))
            except OSError:
                continue
            for name in names:
                if not name.startswith("vram_"):
                    continue
                gpu_id = name.removeprefix("vram_")
                vram = read_int(str(kfd_proc / str(pid) / name))
                if vram is None or not gpu_id.isdigit():
                    continue
                slot = self._kfd_slots.get(int(gpu_id))
                row = usage.setdefault((pid, slot), _Usage())
                row.sources.add("kfd")
                # fdinfo may count the same buffers already: keep the larger figure.
                row.vram = vram if row.vram is None else max(row.vram, vram)

    def _rows(
        self,
        usage: Mapping[tuple[int, str | None], _Usage],
        workers: Mapping[int, str],
    ) -> list[ProcessSample]:
        rows = []
        for (pid, slot), use in sorted(usage.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            name = printable(read_text(f"{self.proc_root}/{pid}/comm")) or str(pid)
            engines = tuple(sorted((k, round(min(v, 100.0), 1)) for k, v in use.engines.items()))
            rows.append(
                ProcessSample(
                    pid=pid,
                    name=name,
                    pci_slot=slot,
                    vram_bytes=use.vram,
                    gtt_bytes=use.gtt,
                    engine_percent=max((v for _, v in engines), default=None),
                    engines=engines,
                    worker=workers.get(pid),
                    sources=tuple(sorted(use.sources)),
                )
            )
        return rows
