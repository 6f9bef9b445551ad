"""Telemetry costs, measured in one run, each printed next to its goal.

1. CPU time of one full sample of one GPU, read from a snapshot tree (goal <= 1 ms)
2. the sampler thread at 2 Hz over 30 s, as a share of one core (goal <= 0.5 %), reading
   the snapshot, the host and this machine's real /proc
3. a DRM fdinfo scan of a simulated /proc with 500 processes (goal <= 10 ms): the cold
   first scan, and the ticks after it at 2 Hz (median and worst)
4. one redraw of 8 GPUs x 12 series holding 24 h of history (goal <= 8 ms), GUI-thread
   CPU time: data and setData, then with the offscreen paint of all 8 panels
5. the history memory for those 8 GPUs (goal <= 64 MB)

    QT_QPA_PLATFORM=offscreen python benchmarks/telemetry.py [--sampler-seconds 30]

The GPU snapshot is ../shared/fixtures/sysfs/rx6900xt (NUL-padded files, three sensors)
when that folder exists, else a synthetic device of the same shape.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHARED_GPU = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "sysfs" / "rx6900xt"


def synthetic_device(root: Path) -> Path:
    device = root / "device"
    files = {
        "uevent": "DRIVER=amdgpu\nPCI_ID=1002:73BF\nPCI_SLOT_NAME=0000:0c:00.0\n",
        "gpu_busy_percent": "3",
        "mem_busy_percent": "0",
        "mem_info_vram_total": "17163091968",
        "mem_info_vram_used": "668274688",
        "mem_info_vis_vram_total": "17163091968",
        "mem_info_vis_vram_used": "668274688",
        "mem_info_gtt_total": "16786171904",
        "mem_info_gtt_used": "62369792",
        "current_link_speed": "16.0 GT/s PCIe",
        "current_link_width": "16",
        "power_dpm_force_performance_level": "auto",
        "power/runtime_status": "active",
    }
    hwmon = {
        "temp1_label": "edge", "temp1_input": "56000", "temp1_crit": "100000",
        "temp2_label": "junction", "temp2_input": "59000", "temp2_crit": "110000",
        "temp3_label": "mem", "temp3_input": "54000", "temp3_crit": "100000",
        "power1_average": "36000000", "power1_cap": "289000000",
        "freq1_label": "sclk", "freq1_input": "500000000",
        "freq2_label": "mclk", "freq2_input": "1000000000",
        "fan1_input": "0", "pwm1": "0", "pwm1_max": "255",
    }  # fmt: skip
    files.update({f"hwmon/hwmon5/{k}": v for k, v in hwmon.items()})
    for name, text in files.items():
        path = device / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # Pad like the real rx6900xt capture: a full page of NULs after the text.
        path.write_bytes((text + "\n").encode().ljust(4096, b"\0"))
    return device


def sysfs_tree(root: Path) -> tuple[Path, str]:
    card = root / "sys" / "class" / "drm" / "card0"
    card.mkdir(parents=True)
    if SHARED_GPU.is_dir():
        source, label = SHARED_GPU, "rx6900xt snapshot"
    else:
        source, label = synthetic_device(root / "synthetic"), "synthetic rx6900xt-like device"
    (card / "device").symlink_to(source, target_is_directory=True)
    return root / "sys", label


def bench_one_sample(sysfs: Path) -> float:
    from rocmpanel.monitor.sysfs_source import discover_gpus

    (gpu,) = discover_gpus(sysfs)
    gpu.read()
    batches = []
    for _ in range(7):
        start = time.process_time()
        for _ in range(300):
            gpu.read()
        batches.append((time.process_time() - start) / 300)
    return statistics.median(batches) * 1e3


def fake_proc(root: Path, processes: int, fds_each: int, drm_share: float) -> Path:
    """A /proc-like tree: every process has fds to ordinary files; some hold a DRM client."""
    proc = root / "proc"
    every = max(1, round(1 / drm_share))
    for pid in range(1000, 1000 + processes):
        pid_dir = proc / str(pid)
        (pid_dir / "fd").mkdir(parents=True)
        (pid_dir / "fdinfo").mkdir()
        (pid_dir / "comm").write_text(f"proc{pid}\n")
        for fd in range(fds_each):
            (pid_dir / "fd" / str(fd)).symlink_to(f"/tmp/file{fd}" if fd % 3 else "pipe:[123]")
            (pid_dir / "fdinfo" / str(fd)).write_text("pos:\t0\nflags:\t02\nmnt_id:\t15\n")
        if pid % every == 0:
            fd = fds_each
            (pid_dir / "fd" / str(fd)).symlink_to("/dev/dri/renderD128")
            (pid_dir / "fdinfo" / str(fd)).write_text(
                "pos:\t0\nflags:\t02100002\nmnt_id:\t24\ndrm-driver:\tamdgpu\n"
                "drm-pdev:\t0000:0c:00.0\n"
                f"drm-client-id:\t{pid}\ndrm-engine-gfx:\t{pid * 1000} ns\n"
                "drm-engine-compute:\t0 ns\ndrm-memory-vram:\t2048 KiB\n"
                "drm-memory-gtt:\t512 KiB\ndrm-memory-cpu:\t0 KiB\n"
            )
    return proc


def bench_fdinfo(root: Path, sysfs: Path) -> tuple[float, float, float, int]:
    """CPU time of the cold first scan, then of ticks at 2 Hz over two rescan periods."""
    from rocmpanel.monitor.fdinfo_source import FdinfoScanner

    proc = fake_proc(root, 500, 16, 0.1)
    cold, ticks = [], []
    rows = 0
    for _ in range(3):
        scanner = FdinfoScanner(proc, sysfs, rescan_s=5.0)
        start = time.process_time()
        rows = len(scanner.scan(now=0.0))
        cold.append(time.process_time() - start)
        for i in range(1, 21):
            start = time.process_time()
            scanner.scan(now=i * 0.5)
            ticks.append(time.process_time() - start)
    return statistics.median(cold) * 1e3, statistics.median(ticks) * 1e3, max(ticks) * 1e3, rows


def bench_sampler(sysfs: Path, seconds: float) -> tuple[float, float, int]:
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    from rocmpanel.monitor.sampler import SamplerThread

    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    thread = SamplerThread(sysfs, "/proc", 500)
    got: list[object] = []
    thread.sample_ready.connect(got.append)
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    thread.start()
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    thread.stop()
    wall = time.perf_counter() - start_wall
    process_share = 100.0 * (time.process_time() - start_cpu) / wall
    sampler_share = 100.0 * thread.sampler.cpu_seconds / wall
    del app
    return sampler_share, process_share, len(got)


def bench_redraw() -> tuple[float, float, float, int]:
    import numpy as np
    from PySide6.QtWidgets import QApplication, QGridLayout, QWidget

    from rocmpanel.monitor.history import GPU_SERIES_NAMES, TelemetryHistory
    from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample
    from rocmpanel.monitor.views.gpu_plots import GpuPanel
    from rocmpanel.monitor.views.tab import MAX_POINTS

    app = QApplication.instance() or QApplication(sys.argv[:1])
    history = TelemetryHistory()
    now = time.time()
    rng = np.random.default_rng(0)
    idents = [
        GpuIdentity(f"0000:{i:02x}:00.0", f"card{i}", f"0000:{i:02x}:00.0", "1002:744c", f"GPU {i}")
        for i in range(8)
    ]
    # 23 h at one sample per 10 s, then the last hour at the fastest rate (100 ms).
    times = np.concatenate(
        [np.arange(now - 86400, now - 3600, 10.0), np.arange(now - 3600, now, 0.1)]
    )
    values = rng.uniform(0, 100, size=(len(times), 8))
    for row, t in enumerate(times):
        v = float(values[row, row % 8])
        gpus = tuple(
            GpuSample(
                ident, False, busy_percent=v, mem_busy_percent=v, vram_used_bytes=int(v * 2**27),
                gtt_used_bytes=int(v * 2**20), temp_edge_c=v, temp_junction_c=v, temp_mem_c=v,
                power_w=v, sclk_mhz=v * 20, mclk_mhz=v * 10, fan_rpm=int(v * 30), fan_percent=v,
                vram_total_bytes=2**34, power_cap_w=290.0, crit_edge_c=100.0,
            )
            for ident in idents
        )  # fmt: skip
        history.add(Sample(float(t), gpus, None))
    grid = QWidget()
    layout = QGridLayout(grid)
    panels = [GpuPanel(ident.key) for ident in idents]
    for i, panel in enumerate(panels):
        layout.addWidget(panel, i // 2, i % 2)
    grid.resize(2400, 2000)
    grid.show()
    app.processEvents()
    last = history.last
    assert last is not None
    update, paint = [], []
    for frame in range(30):
        # Successive frames, 100 ms apart, as the GUI timer draws them (CPU time of the
        # GUI thread, so other load on this machine does not count).
        t_to = now + frame * 0.1
        start = time.thread_time()
        for panel, gpu in zip(panels, last.gpus, strict=True):
            window = history.gpus[panel.key].window(t_to - 86400, t_to, MAX_POINTS)
            panel.redraw(window, t_to - 86400, t_to, gpu)
        update.append(time.thread_time() - start)
        start = time.thread_time()
        grid.repaint()
        paint.append(time.thread_time() - start)
    mb = history.nbytes() / 1e6
    series = len(GPU_SERIES_NAMES)
    grid.close()
    return statistics.median(update) * 1e3, statistics.median(paint) * 1e3, mb, series


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sampler-seconds", type=float, default=30.0)
    args = parser.parse_args()
    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="rocmpanel-bench-") as tmp:
        root = Path(tmp)
        sysfs, label = sysfs_tree(root)
        one = bench_one_sample(sysfs)
        rows.append((f"one full GPU sample, CPU time ({label})", one, 1.0, "ms"))
        cold, warm, worst, found = bench_fdinfo(root, sysfs)
        rows.append(
            (f"fdinfo scan, 500 processes x 17 fds, {found} with DRM (cold)", cold, 10.0, "ms")
        )
        rows.append(("fdinfo scan, 500 processes, tick at 2 Hz (median)", warm, 10.0, "ms"))
        rows.append(
            ("fdinfo scan, 500 processes, tick at 2 Hz (worst, with rescans)", worst, 10.0, "ms")
        )
        update, paint, mb, series = bench_redraw()
        rows.append(
            (f"redraw 8 GPUs x {series} series, 24 h history (data + setData)", update, 8.0, "ms")
        )
        rows.append(("  ... plus painting all 8 panels offscreen", update + paint, 8.0, "ms"))
        rows.append(
            (f"history memory, 8 GPUs x {series} series, 1 h full + 24 h buckets", mb, 64.0, "MB")
        )
        share, process_share, ticks = bench_sampler(sysfs, args.sampler_seconds)
        rows.append(
            (
                f"sampler thread, 2 Hz, {args.sampler_seconds:.0f} s ({ticks} ticks), % of a core",
                share,
                0.5,
                "%",
            )
        )
        rows.append(("  whole process during that time, % of a core", process_share, 0.5, "%"))
    width = max(len(r[0]) for r in rows)
    for name, value, goal, unit in rows:
        verdict = "ok" if value <= goal else "OVER"
        print(f"{name:<{width}}  {value:8.3f} {unit:<2}  goal <= {goal:g} {unit}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
