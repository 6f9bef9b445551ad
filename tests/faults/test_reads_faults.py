"""Issue 12, finding 10: no read hangs and none is unbounded.

A FIFO (nobody writing), a device (/dev/zero) or a huge file is put at each place the panel
reads a file it did not write: sysfs attributes of a captured tree, hwmon labels, KFD
topology properties, the IP discovery table, DRM fdinfo and comm under /proc, ROCm version
files, os-release, a model folder's JSON files and safetensors header, the data set files,
``doctor --from``/``--rocminfo-file`` inputs and stdin. Each call runs in a thread joined
with a timeout, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rocmpanel.base import datasets
from rocmpanel.chat.model_check import check_model, read_safetensors_header
from rocmpanel.machine import sysfs
from rocmpanel.machine.drm_sysfs import read_device_dir
from rocmpanel.machine.ip_discovery import read_gc_version
from rocmpanel.machine.kfd_topology import read_nodes
from rocmpanel.machine.rocm_version import find_rocm_installs, os_release
from rocmpanel.monitor.collector import TelemetryCollector
from rocmpanel.monitor.fdinfo_source import FdinfoScanner
from rocmpanel.monitor.sysfs_source import discover_gpus
from rocmpanel.setup.capture_input import CaptureReadError, read_capture
from rocmpanel.shell.cli import main

from ..monitor.test_fdinfo import PDEV, add_process, fdinfo
from ..monitor.test_sysfs_faults import make_gpu, write

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

T = TypeVar("T")


def within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result; fails when it has not returned after ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in box:
        raise box["error"]
    assert time.monotonic() - start < seconds
    return box["value"]  # type: ignore[no-any-return]


def fifo(path: Path) -> Path:
    """A FIFO at ``path`` (replacing a file there) that nobody ever writes to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)
    return path


def device(path: Path) -> Path:
    """``path`` made a symlink to /dev/zero (a device that never ends)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to("/dev/zero")
    return path


def huge(path: Path, size: int) -> Path:
    """A sparse file of ``size`` bytes (costs no disk)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


@pytest.fixture(autouse=True)
def _fresh_refusal_log() -> None:
    sysfs._logged.clear()  # each test sees its own refusal lines


# ---- the one sysfs reader -----------------------------------------------------------------


def test_sysfs_reader_refuses_fifo_device_and_huge_files_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rocmpanel.machine.sysfs")
    pipe = fifo(tmp_path / "gpu_busy_percent")
    zero = device(tmp_path / "zero")
    big = huge(tmp_path / "big", 64 * 1024 + 1)
    assert within(1, lambda: sysfs.read_text(pipe)) is None
    assert within(1, lambda: sysfs.read_int(zero)) is None
    assert within(1, lambda: sysfs.read_text(big)) is None
    left_out = ": not read, so its figure is left out"
    assert [r.getMessage() for r in caplog.records] == [
        f"{pipe} is a FIFO (named pipe), not a regular file{left_out}",
        f"{zero} is a device, not a regular file{left_out}",
        f"{big} is larger than 64 KiB{left_out}",
    ]
    sysfs.read_text(pipe)  # every tick: logged once, not again
    assert len(caplog.records) == 3
    exact = huge(tmp_path / "exact", 64 * 1024)
    assert sysfs.read_text(exact) is None  # all NULs: empty, but read (not refused)
    assert len(caplog.records) == 3


def test_procfs_files_of_size_zero_are_read_to_the_end() -> None:
    status = Path(f"/proc/{os.getpid()}/status")
    if not status.exists():
        pytest.skip("no procfs here")
    assert status.stat().st_size == 0
    text = within(1, lambda: sysfs.read_text(status))
    assert text is not None and f"Pid:\t{os.getpid()}" in text
    comm = sysfs.read_text(f"/proc/{os.getpid()}/comm")
    assert comm == Path(f"/proc/{os.getpid()}/comm").read_text().strip()


@pytest.mark.parametrize(
    "name",
    [
        "gpu_busy_percent",
        "power/runtime_status",
        "hwmon/hwmon3/temp1_input",
        "hwmon/hwmon3/temp2_label",
        "current_link_speed",
        "pp_dpm_sclk",
    ],
)
def test_a_fifo_in_a_captured_device_is_no_reading(tmp_path: Path, name: str) -> None:
    device_dir = make_gpu(tmp_path)
    fifo(device_dir / name)
    (gpu,) = within(1, lambda: discover_gpus(tmp_path))
    sample = within(1, gpu.read)
    figure = {
        "gpu_busy_percent": sample.busy_percent,
        "power/runtime_status": sample.asleep,  # unreadable status: awake, read as usual
        "hwmon/hwmon3/temp1_input": sample.temp_junction_c,
        # temp2 unlabelled would be "junction", which temp1's label already took
        "hwmon/hwmon3/temp2_label": sample.temp_edge_c,
        "current_link_speed": sample.link,
        "pp_dpm_sclk": sample.sclk_mhz,
    }[name]
    assert figure == (False if name == "power/runtime_status" else None)
    assert sample.power_w == 150.0  # the rest of the device still reads


def test_a_device_and_a_huge_file_in_a_captured_device(tmp_path: Path) -> None:
    device_dir = make_gpu(tmp_path)
    device(device_dir / "mem_info_vram_used")
    huge(device_dir / "hwmon/hwmon3/power1_input", 10 * 1024 * 1024)
    (gpu,) = discover_gpus(tmp_path)
    sample = within(1, gpu.read)
    assert (sample.vram_used_bytes, sample.power_w) == (None, None)
    assert sample.vram_total_bytes == 21458059264


def test_telemetry_command_over_a_tree_full_of_fifos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device_dir = make_gpu(tmp_path / "sys")
    for name in ("product_name", "gpu_busy_percent", "hwmon/hwmon3/fan1_input"):
        fifo(device_dir / name)
    fifo(tmp_path / "sys/class/kfd/kfd/topology/nodes/1/properties")
    (tmp_path / "proc").mkdir()
    argv = ["telemetry", "--json", "--sysfs-root", str(tmp_path / "sys")]
    code = within(5, lambda: main([*argv, "--proc-root", str(tmp_path / "proc")]))
    assert code == 0
    out = capsys.readouterr().out
    assert '"busy_percent": null' in out and '"fan_rpm": null' in out


# ---- machine detection: KFD topology, IP discovery, DRM devices, ROCm, os-release ---------


def test_kfd_properties_fifo_skips_the_node(tmp_path: Path) -> None:
    nodes = tmp_path / "class/kfd/kfd/topology/nodes"
    write(nodes / "1/properties", "simd_count 192\ngfx_target_version 110000\n")
    write(nodes / "1/gpu_id", "48612\n")
    fifo(nodes / "2/properties")
    write(nodes / "3/properties", "simd_count 96\ngfx_target_version 100300\n")
    fifo(nodes / "3/gpu_id")
    fifo(nodes / "3/mem_banks/0/properties")
    found = within(1, lambda: read_nodes(tmp_path))
    assert [(n.node, n.gfx, n.gpu_id, n.local_mem_bytes) for n in found] == [
        (1, "gfx1100", 48612, None),
        (3, "gfx1030", None, None),
    ]


def test_ip_discovery_fifo_is_no_version(tmp_path: Path) -> None:
    block = tmp_path / "ip_discovery/die/0/GC/0"
    write(block / "major", "11\n")
    write(block / "minor", "0\n")
    fifo(block / "revision")
    assert within(1, lambda: read_gc_version(tmp_path)) is None


def test_drm_device_with_fifo_uevent_and_product_name(tmp_path: Path) -> None:
    fifo(tmp_path / "uevent")
    fifo(tmp_path / "product_name")
    write(tmp_path / "vendor", "0x1002\n")
    write(tmp_path / "device", "0x744c\n")
    dev = within(1, lambda: read_device_dir(tmp_path, "card0"))
    assert dev is not None
    assert (dev.pci_id, dev.product_name, dev.driver) == ("1002:744c", None, None)


def test_rocm_version_files_and_os_release(tmp_path: Path) -> None:
    fifo(tmp_path / "opt/rocm-6.2.2/.info/version")
    device(tmp_path / "opt/rocm-6.2.2/include/rocm-core/rocm_version.h")
    installs = within(1, lambda: find_rocm_installs(tmp_path / "opt"))
    assert [(Path(i.path).name, i.version) for i in installs] == [("rocm-6.2.2", "6.2.2")]
    fifo(tmp_path / "etc/os-release")
    name = within(1, lambda: os_release(tmp_path / "etc"))
    assert name == os_release(tmp_path / "nowhere")  # /usr/lib/os-release's, as when missing


# ---- DRM fdinfo and comm under /proc ----------------------------------------------------


def test_fdinfo_and_comm_fifos(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    add_process(proc, 100, "good", {3: ("/dev/dri/renderD128", fdinfo(1, vram_kib=1024))})
    pid_dir = add_process(proc, 200, "bad", {3: ("/dev/dri/renderD128", fdinfo(2))})
    fifo(pid_dir / "fdinfo/3")
    fifo(pid_dir / "comm")
    third = add_process(proc, 300, "x", {4: ("/dev/dri/renderD128", fdinfo(3, vram_kib=2048))})
    fifo(third / "comm")
    scanner = FdinfoScanner(proc, tmp_path / "sys")
    rows = within(1, scanner.scan)
    assert [(r.pid, r.name, r.pci_slot, r.vram_bytes) for r in rows] == [
        (100, "good", PDEV, 1024 * 1024),
        (300, "300", PDEV, 2048 * 1024),  # an unreadable comm: the pid names it
    ]


def test_collector_with_fifo_everywhere_returns(tmp_path: Path) -> None:
    device_dir = make_gpu(tmp_path / "sys")
    for path in device_dir.rglob("*"):
        if path.is_file() and path.name != "uevent":
            fifo(path)
    proc = tmp_path / "proc"
    pid_dir = add_process(proc, 100, "p", {3: ("/dev/dri/renderD128", fdinfo(1))})
    fifo(pid_dir / "fdinfo/3")

    def collect() -> Any:
        collector = TelemetryCollector(tmp_path / "sys", proc, host=False)
        try:
            return collector.collect()
        finally:
            collector.close()

    sample = within(2, collect)
    (gpu,) = sample.gpus
    assert (gpu.busy_percent, gpu.vram_used_bytes, gpu.link) == (None, None, None)
    assert sample.processes == ()


# ---- a model folder ----------------------------------------------------------------------


def _model_folder(root: Path) -> Path:
    write(root / "config.json", '{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}')
    write(
        root / "tokenizer.json",
        '{"added_tokens": [], "model": {"type": "BPE", "vocab": {}, "merges": []}}',
    )
    header = b'{"w": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}}'
    write(root / "model.safetensors", len(header).to_bytes(8, "little") + header + b"\0" * 8)
    return root


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "config.json",
            "config.json cannot be used: it is a FIFO (named pipe), not a regular file.",
        ),
        (
            "model.safetensors",
            "model.safetensors is not a regular file (a FIFO, a device or a socket), so it is "
            "not a safetensors file.",
        ),
        (
            "model.safetensors.index.json",
            "model.safetensors.index.json cannot be used: it is a FIFO (named pipe), not a "
            "regular file.",
        ),
    ],
)
def test_model_folder_fifos_are_problems_not_hangs(tmp_path: Path, name: str, problem: str) -> None:
    folder = _model_folder(tmp_path / "model")
    fifo(folder / name)
    check = within(1, lambda: check_model(folder))
    assert problem in check.problems


def test_model_folder_tokenizer_config_fifo_is_a_warning(tmp_path: Path) -> None:
    folder = _model_folder(tmp_path / "model")
    fifo(folder / "tokenizer_config.json")
    check = within(1, lambda: check_model(folder))
    assert check.ok and check.parameters == 4
    assert (
        "tokenizer_config.json cannot be used: it is a FIFO (named pipe), not a regular file."
        in check.warnings
    )


def test_safetensors_device_huge_header_and_cut_short(tmp_path: Path) -> None:
    from rocmpanel.base.errors import PanelError

    zero = device(tmp_path / "zero.safetensors")
    with pytest.raises(PanelError, match=r"zero\.safetensors is not a regular file"):
        within(1, lambda: read_safetensors_header(zero))
    # A header length of 1 GiB: refused before a byte of it is read.
    big = tmp_path / "big.safetensors"
    big.write_bytes((1 << 30).to_bytes(8, "little") + b"{}")
    with pytest.raises(PanelError, match=r"big\.safetensors has an implausible safetensors header"):
        within(1, lambda: read_safetensors_header(big))
    # A length within the cap but beyond the file's end: refused, not read.
    short = tmp_path / "short.safetensors"
    short.write_bytes((1000).to_bytes(8, "little") + b'{"a": 1}')
    with pytest.raises(PanelError, match=r"short\.safetensors has an implausible"):
        read_safetensors_header(short)


def test_huge_config_json_is_refused(tmp_path: Path) -> None:
    folder = _model_folder(tmp_path / "model")
    (folder / "config.json").unlink()
    huge(folder / "config.json", 33 * 1024 * 1024)
    check = within(1, lambda: check_model(folder))
    assert "config.json cannot be used: it is larger than 32 MiB." in check.problems


# ---- the data set files ------------------------------------------------------------------


def test_data_set_reads_refuse_fifo_device_and_huge(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "compat.yaml")
    with pytest.raises(OSError, match="is a FIFO \\(named pipe\\), not a regular file"):
        within(1, lambda: datasets.read_limited_bytes(pipe))
    with pytest.raises(OSError, match="is a device, not a regular file"):
        within(1, lambda: datasets.read_limited(device(tmp_path / "zero.yaml")))
    with pytest.raises(OSError, match="is larger than 8 MiB"):
        within(1, lambda: datasets.read_limited(huge(tmp_path / "big.yaml", 8 * 1024 * 1024 + 1)))


def test_data_update_from_a_fifo_or_device_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipe = fifo(tmp_path / "set.zip")
    with pytest.raises(SystemExit) as exit_:
        within(1, lambda: main(["data", "update", "--from", str(pipe)]))
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"rocmpanel data: error: argument --from: {pipe} is a FIFO, not a folder or a .zip "
        "file of a data set\n"
    )


# ---- doctor --from, --rocminfo-file and stdin ------------------------------------------


def test_capture_fifo_nobody_writes_to(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "capture.txt")
    with pytest.raises(CaptureReadError) as error:
        within(1, lambda: read_capture(str(pipe), writer_wait_s=0.3))
    assert str(error.value) == (
        f"Nothing is writing to the FIFO {pipe} (waited 0.3 s): start the command that writes "
        "to it first, or save its output to a file and give that."
    )


def test_capture_fifo_whose_writer_goes_silent(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "capture.txt")
    opened = threading.Event()
    done = threading.Event()

    def silent_writer() -> None:
        fd = os.open(pipe, os.O_WRONLY)  # waits for the reader, then writes a little
        os.write(fd, b"ROCk module is loaded\n")
        opened.set()
        done.wait(5)
        os.close(fd)

    writer = threading.Thread(target=silent_writer, daemon=True)
    writer.start()
    try:
        with pytest.raises(CaptureReadError) as error:
            within(2, lambda: read_capture(str(pipe), writer_wait_s=1, idle_s=0.3))
    finally:
        done.set()
        writer.join(5)
    assert opened.is_set()
    assert str(error.value).startswith(f"{pipe} sent nothing for 0.3 s, so it was not read")


def test_capture_fifo_over_the_limit(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "capture.txt")

    def flood() -> None:
        fd = os.open(pipe, os.O_WRONLY)
        try:
            os.write(fd, b"x" * 5000)
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    with pytest.raises(CaptureReadError, match=r"capture\.txt is larger than 4 KiB"):
        within(2, lambda: read_capture(str(pipe), limit=4096))
    writer.join(5)


def test_doctor_from_a_fifo_a_device_and_a_huge_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipe = fifo(tmp_path / "rocminfo.txt")
    assert within(2.5, lambda: main(["doctor", "--from", str(pipe)])) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"rocmpanel doctor: Nothing is writing to the FIFO {pipe} (waited 0.5 s): start the "
        "command that writes to it first, or save its output to a file and give that.\n"
    )
    assert within(1, lambda: main(["doctor", "--from", "/dev/zero"])) == 2
    assert capsys.readouterr().err == (
        "rocmpanel doctor: /dev/zero is a device, not a regular file (a device or a socket "
        "is never a tool's output): save the output to a file and use that file instead.\n"
    )
    big = huge(tmp_path / "big.txt", 64 * 1024 * 1024 + 1)
    assert within(2, lambda: main(["doctor", "--from", str(big)])) == 2
    assert capsys.readouterr().err == (
        f"rocmpanel doctor: {big} is larger than 64 MiB, more than any tool's output: give "
        "only the output of rocminfo, rocm-smi, amd-smi, hipInfo, collect_env or lspci.\n"
    )
    assert within(2.5, lambda: main(["doctor", "--rocminfo-file", str(pipe)])) == 2
    assert "Nothing is writing to the FIFO" in capsys.readouterr().err


def test_doctor_sysfs_root_that_is_a_fifo_or_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipe = fifo(tmp_path / "sys")
    for root, why in (
        (pipe, "is not a folder (give a captured /sys tree or a cardN/device folder)"),
        (tmp_path / "none", "does not exist (give a captured /sys tree or a cardN/device folder)"),
    ):
        with pytest.raises(SystemExit) as exit_:
            within(1, lambda root=root: main(["doctor", "--sysfs-root", str(root)]))
        assert exit_.value.code == 2
        assert capsys.readouterr().err.endswith(
            f"rocmpanel doctor: error: argument --sysfs-root: {root} {why}\n"
        )


def test_stdin_pipe_is_bounded_and_gives_up_when_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as raw:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
        os.write(write_end, b"partial output\n")
        with pytest.raises(CaptureReadError, match=r"stdin sent nothing for 0\.3 s"):
            within(2, lambda: read_capture("-", idle_s=0.3))
        os.write(write_end, b"y" * 3000)
        with pytest.raises(CaptureReadError, match="stdin is larger than 2 KiB"):
            within(2, lambda: read_capture("-", limit=2048, idle_s=0.3))
        os.close(write_end)


def test_stdin_pipe_read_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, "héllo\n".encode())
    os.close(write_end)
    with os.fdopen(read_end, "rb") as raw:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw))
        assert within(1, lambda: read_capture("-")) == "héllo\n"


def test_doctor_from_dev_zero_as_a_command(tmp_path: Path) -> None:
    """The issue's own reproduction, as a user runs it: fast, a sentence, a failing code."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "doctor", "--from", "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )
    assert time.monotonic() - start < 10  # interpreter start-up included; the read is ms
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("rocmpanel doctor: /dev/zero is a device, not a regular file")
    assert "Traceback" not in done.stderr
