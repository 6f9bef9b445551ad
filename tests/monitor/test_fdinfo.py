"""Per-process GPU use from a synthetic /proc tree: DRM fdinfo de-duplication, engine
percent, KFD VRAM, other users skipped, the panel's own workers labelled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocmpanel.monitor.fdinfo_source import FdinfoScanner, parse_fdinfo

PDEV = "0000:03:00.0"


def fdinfo(client: int, gfx_ns: int = 0, vram_kib: int = 0, gtt_kib: int = 0, **extra: str) -> str:
    lines = [
        "pos:\t0",
        "flags:\t02100002",
        "drm-driver:\tamdgpu",
        f"drm-pdev:\t{PDEV}",
        f"drm-client-id:\t{client}",
        f"drm-engine-gfx:\t{gfx_ns} ns",
        "drm-engine-compute:\t0 ns",
        f"drm-memory-vram:\t{vram_kib} KiB",
        f"drm-memory-gtt:\t{gtt_kib} KiB",
        *(f"{k.replace('_', '-')}:\t{v}" for k, v in extra.items()),
    ]
    return "\n".join(lines) + "\n"


def add_process(
    proc: Path, pid: int, comm: str, fds: dict[int, tuple[str, str]], uid: int | None = None
) -> Path:
    """/proc/<pid> with fd/<n> symlinks to targets and fdinfo/<n> texts."""
    pid_dir = proc / str(pid)
    (pid_dir / "fd").mkdir(parents=True)
    (pid_dir / "fdinfo").mkdir()
    (pid_dir / "comm").write_text(comm + "\n")
    for fd, (target, info) in fds.items():
        (pid_dir / "fd" / str(fd)).symlink_to(target)
        (pid_dir / "fdinfo" / str(fd)).write_text(info)
    if uid is not None:
        os.chown(pid_dir, uid, uid)
    return pid_dir


def test_parse_fdinfo_units_and_other_drivers() -> None:
    client = parse_fdinfo(fdinfo(7, gfx_ns=5, vram_kib=2048, drm_resident_gtt="3 MiB"))
    assert client is not None
    assert client.client_id == "7" and client.pdev == PDEV
    assert client.vram_bytes == 2048 * 1024
    assert client.gtt_bytes == 3 * 1024 * 1024  # drm-resident-* wins over drm-memory-*
    assert client.engines_ns == {"gfx": 5, "compute": 0}
    assert parse_fdinfo("pos: 0\nflags: 02\n") is None
    assert parse_fdinfo("drm-driver: i915\ndrm-client-id: 3\n") is None


def test_shared_clients_are_counted_once(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    render = "/dev/dri/renderD128"
    # pid 100 holds client 5 twice (dup) and client 6; its child 101 inherited client 5.
    add_process(
        proc,
        100,
        "python3",
        {
            3: (render, fdinfo(5, vram_kib=1024, gtt_kib=10)),
            4: (render, fdinfo(5, vram_kib=1024, gtt_kib=10)),
            5: (render, fdinfo(6, vram_kib=512)),
            6: ("/home/user/notes.txt", "pos: 0\n"),
        },
    )
    add_process(proc, 101, "worker", {3: (render, fdinfo(5, vram_kib=1024, gtt_kib=10))})
    add_process(proc, 102, "bash", {0: ("/dev/pts/0", "pos: 0\n")})
    rows = FdinfoScanner(proc, tmp_path / "sys").scan({101: "chat"})
    assert [(r.pid, r.vram_bytes, r.gtt_bytes) for r in rows] == [(100, 1536 * 1024, 10 * 1024)]
    assert rows[0].name == "python3" and rows[0].pci_slot == PDEV
    assert rows[0].engine_percent is None  # no earlier scan to measure against


def test_engine_percent_from_two_scans(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    pid_dir = add_process(proc, 200, "llama", {3: ("/dev/dri/renderD128", fdinfo(9, gfx_ns=0))})
    scanner = FdinfoScanner(proc, tmp_path / "sys")
    scanner.scan(now=10.0)
    (pid_dir / "fdinfo" / "3").write_text(fdinfo(9, gfx_ns=250_000_000))  # 0.25 s busy
    (row,) = scanner.scan({200: "chat"}, now=10.5)
    assert row.engine_percent == pytest.approx(50.0)
    assert dict(row.engines)["gfx"] == pytest.approx(50.0)
    assert row.worker == "chat"


def test_new_drm_fds_are_found_at_the_rescan(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    pid_dir = add_process(proc, 300, "late", {0: ("/dev/null", "pos: 0\n")})
    scanner = FdinfoScanner(proc, tmp_path / "sys", rescan_s=5.0)
    assert scanner.scan(now=0.0) == ()
    (pid_dir / "fd" / "7").symlink_to("/dev/dri/card0")
    (pid_dir / "fdinfo" / "7").write_text(fdinfo(1, vram_kib=4))
    assert scanner.scan(now=1.0) == ()  # fd list cached until the rescan
    (row,) = scanner.scan(now=6.0)
    assert row.vram_bytes == 4096


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_other_users_processes_are_skipped(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    render = "/dev/dri/renderD128"
    add_process(proc, 400, "mine", {3: (render, fdinfo(1, vram_kib=8))}, uid=1234)
    add_process(proc, 401, "theirs", {3: (render, fdinfo(2, vram_kib=8))}, uid=4321)
    rows = FdinfoScanner(proc, tmp_path / "sys", uid=1234).scan()
    assert [r.pid for r in rows] == [400]


def test_kfd_vram_shows_compute_processes(tmp_path: Path) -> None:
    proc, sys_root = tmp_path / "proc", tmp_path / "sys"
    add_process(proc, 500, "rocm-job", {})
    add_process(proc, 501, "both", {3: ("/dev/dri/renderD128", fdinfo(3, vram_kib=1024))})
    node = sys_root / "class/kfd/kfd/topology/nodes/1"
    node.mkdir(parents=True)
    (node / "gpu_id").write_text("4242\n")
    (node / "properties").write_text("simd_count 96\nlocation_id 768\ndomain 0\n")
    kfd = sys_root / "class/kfd/kfd/proc"
    (kfd / "500").mkdir(parents=True)
    (kfd / "500" / "vram_4242").write_text(str(3 * 2**30) + "\n")
    (kfd / "501").mkdir()
    (kfd / "501" / "vram_4242").write_text(str(2**20) + "\n")
    (kfd / "999").mkdir()  # a process that is gone from /proc
    (kfd / "999" / "vram_4242").write_text("1\n")
    rows = {r.pid: r for r in FdinfoScanner(proc, sys_root).scan()}
    assert set(rows) == {500, 501}
    assert rows[500].vram_bytes == 3 * 2**30 and rows[500].pci_slot == PDEV
    assert rows[500].sources == ("kfd",) and rows[500].engine_percent is None
    assert rows[501].vram_bytes == 2**20 and rows[501].sources == ("fdinfo", "kfd")


def test_vanishing_processes_never_raise(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    pid_dir = add_process(proc, 600, "short", {3: ("/dev/dri/renderD128", fdinfo(1))})
    scanner = FdinfoScanner(proc, tmp_path / "sys")
    assert len(scanner.scan(now=0.0)) == 1
    (pid_dir / "fdinfo" / "3").unlink()
    assert scanner.scan(now=0.5) == ()
    assert FdinfoScanner(tmp_path / "no-proc", tmp_path / "sys").scan() == ()
