"""The one sysfs reader (rocmpanel.machine.sysfs) and the one KFD topology reader, as the
Monitor's sampler and machine detection both use them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocmpanel.machine import sysfs
from rocmpanel.machine.kfd_topology import KfdNode, read_nodes
from rocmpanel.machine.sysfs import read_int, read_text


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def test_readers_never_raise(tmp_path: Path) -> None:
    assert read_text(tmp_path) is None  # a directory
    assert read_text(tmp_path / "missing") is None
    assert read_text(None) is None
    assert read_text("bad\0path") is None
    assert read_int(None) is None
    assert read_int(write(tmp_path / "x", "12 extra words\n")) == 12
    assert read_int(str(tmp_path / "x")) == 12  # str and Path alike
    assert read_int(write(tmp_path / "garbage", "not a number\n")) is None


def test_empty_and_padded_files(tmp_path: Path) -> None:
    assert read_text(write(tmp_path / "empty", "")) is None
    assert read_text(write(tmp_path / "blank", "  \n")) is None
    padded = write(tmp_path / "padded", b"amdgpu\n".ljust(4096, b"\0"))
    assert read_text(padded) == "amdgpu"
    assert read_int(write(tmp_path / "n", b"17\n".ljust(4096, b"\0"))) == 17


@pytest.mark.parametrize(
    ("text", "scale", "expected"),
    [
        ("65535", 1, None),
        ("4294967295", 1, None),
        ("18446744073709551615", 1, None),
        ("65535000", 1000, None),  # a sentinel once scaled (m°C)
        ("65535000", 1, 65535000),  # unscaled, the same number is a reading
        ("71000", 1000, 71000),
        ("0", 1, 0),
    ],
)
def test_sentinels(tmp_path: Path, text: str, scale: int, expected: int | None) -> None:
    assert read_int(write(tmp_path / "v", text + "\n"), scale) == expected


def test_hex_base(tmp_path: Path) -> None:
    assert read_int(write(tmp_path / "id", "744c\n"), base=16) == 0x744C


def test_a_file_larger_than_a_page_is_read_whole(tmp_path: Path) -> None:
    text = "\n".join(f"#define LINE_{i} {i}" for i in range(2000))  # about 40 kB
    assert read_text(write(tmp_path / "rocm_version.h", text)) == text


def test_os_errors_on_read_are_none_and_close_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "busy", "1\n")
    real_close = os.close
    closed: list[int] = []

    def failing_read(fd: int, n: int) -> bytes:
        raise OSError(16, "Device or resource busy")

    def recording_close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(sysfs.os, "read", failing_read)
    monkeypatch.setattr(sysfs.os, "close", recording_close)
    assert read_text(path) is None
    assert len(closed) == 1
    monkeypatch.undo()
    assert read_int(path) == 1


def test_kfd_nodes_carry_gpu_id_slot_and_gfx(tmp_path: Path) -> None:
    nodes = tmp_path / "class/kfd/kfd/topology/nodes"
    write(nodes / "0/properties", "cpu_cores_count 16\nsimd_count 0\n")
    write(nodes / "0/gpu_id", "0\n")
    # location_id = bus << 8 | device << 3 | function: 0000:03:00.0
    write(
        nodes / "1/properties",
        "simd_count 192\ngfx_target_version 110000\nlocation_id 768\ndomain 0\n"
        "vendor_id 4098\ndevice_id 29772\ndrm_render_minor 128\n",
    )
    write(nodes / "1/gpu_id", "48612\n")
    write(nodes / "1/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 25753026560\n")
    write(nodes / "2/properties", "simd_count 96\ngfx_target_version 100300\nlocation_id 3072\n")
    (node,) = [n for n in read_nodes(tmp_path) if n.gpu_id]
    assert isinstance(node, KfdNode)
    assert (node.gpu_id, node.bdf, node.gfx) == (48612, "0000:03:00.0", "gfx1100")
    assert node.local_mem_bytes == 25753026560
    assert [n.node for n in read_nodes(tmp_path)] == [1, 2]  # the CPU node is left out


def test_printable_takes_control_characters_out() -> None:
    assert sysfs.printable(None) is None
    assert sysfs.printable("auto") == "auto"
    assert sysfs.printable("16.0\x1b GT/s\x07 PCIe") == "16.0 GT/s PCIe"
    assert sysfs.printable("a\tb\r\nc\x7f\x9b") == "a b c"
    assert sysfs.printable("  \x00\x1b ") is None
    assert sysfs.printable("Radeon™ Pro W7900") == "Radeon™ Pro W7900"


def test_limit_is_the_callers(tmp_path: Path) -> None:
    text = "x" * 100_000  # over the sysfs cap of 64 KiB
    path = write(tmp_path / "rocm_version.h", text)
    assert read_text(path) is None
    assert read_text(path, limit=200_000) == text
