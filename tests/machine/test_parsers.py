"""Detection sources on the project's own small captures: rocminfo, KFD, DRM, lspci,
Windows CIM / registry / hipInfo."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rocmpanel.machine import drm_sysfs, kfd_topology, windows_gpu
from rocmpanel.machine.parsers import lspci as lspci_parse
from rocmpanel.machine.parsers.rocminfo import bdf_from_bdfid, gpus_from_rocminfo, parse_rocminfo

ROCMINFO = """\
ROCk module version 6.10.5 is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.15
Runtime Ext Version:     1.7

==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD Ryzen 9 7950X 16-Core Processor
  Uuid:                    CPU-XX
  Marketing Name:          AMD Ryzen 9 7950X 16-Core Processor
  Node:                    0
  Device Type:             CPU
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    65536(0x10000) KB
*******
Agent 2
*******
  Name:                    gfx1030
  Uuid:                    GPU-0123456789abcdef
  Marketing Name:          AMD Radeon RX 6800 XT
  Node:                    1
  Device Type:             GPU
  Chip ID:                 29631(0x73bf)
  BDFID:                   2816
  Compute Unit:            72
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    16760832(0xffc000) KB
    Pool 2
      Segment:                 GROUP
      Size:                    64(0x40) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1030
*** Done ***
"""


def test_rocminfo_gpu_agent() -> None:
    report = parse_rocminfo(ROCMINFO)
    assert report.rock_version == "6.10.5" and report.runtime_version == "1.15"
    assert [a.device_type for a in report.agents] == ["CPU", "GPU"]
    (gpu,) = gpus_from_rocminfo(report)
    assert gpu.name == "AMD Radeon RX 6800 XT"
    assert gpu.gfx == "gfx1030"
    assert gpu.pci_id == "1002:73bf"
    assert gpu.bdf == "0000:0b:00.0"
    assert gpu.vram_bytes == 16760832 * 1024
    assert gpu.kfd_node == 1


def test_rocminfo_errors() -> None:
    text = (
        "ROCk module is loaded\n"
        "Unable to open /dev/kfd read-write: Permission denied\n"
        'alice is not member of "render" group, the default DRM access group.\n'
    )
    report = parse_rocminfo(text)
    assert report.kfd_error == "Permission denied"
    assert report.not_member_of == ("render",)
    assert report.agents == ()


def test_bdfid() -> None:
    assert bdf_from_bdfid(768) == "0000:03:00.0"
    assert bdf_from_bdfid(10240) == "0000:28:00.0"
    assert bdf_from_bdfid(0) is None


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def test_kfd_topology(tmp_path: Path) -> None:
    nodes = tmp_path / "class/kfd/kfd/topology/nodes"
    _write(nodes / "0/properties", "cpu_cores_count 16\nsimd_count 0\n")
    _write(
        nodes / "1/properties",
        "simd_count 192\ngfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\n"
        "location_id 768\ndomain 0\ndrm_render_minor 128\n",
    )
    _write(nodes / "1/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 25753026560\n")
    _write(nodes / "2/properties", b"simd_count 8\ngfx_target_version 100306\x00\x00\x00")
    (nodes / "3").mkdir()  # no properties file at all
    found = kfd_topology.read_nodes(tmp_path)
    assert [n.node for n in found] == [1, 2]
    gpus = kfd_topology.gpus_from_kfd(found)
    assert gpus[0].gfx == "gfx1100" and gpus[0].pci_id == "1002:744c"
    assert gpus[0].bdf == "0000:03:00.0" and gpus[0].vram_bytes == 25753026560
    assert gpus[1].gfx == "gfx1036" and gpus[1].pci_id is None


def test_kfd_absent(tmp_path: Path) -> None:
    assert kfd_topology.read_nodes(tmp_path) == []


def test_drm_follows_symlinks_and_survives_bad_files(tmp_path: Path) -> None:
    pci = tmp_path / "devices/pci0000:00/0000:00:01.1/0000:0b:00.0"
    _write(pci / "vendor", "0x1002\n")
    _write(pci / "device", b"0x73bf\n" + b"\x00" * 4000)
    _write(pci / "mem_info_vram_total", "17163091968\n")
    (pci / "uevent").mkdir()  # reading it fails with an OSError: must not raise
    cards = tmp_path / "class/drm"
    cards.mkdir(parents=True)
    (cards / "card1").mkdir()
    os.symlink(pci, cards / "card1" / "device")
    os.symlink(pci, cards / "card1-DP-1")  # a connector, not a card
    intel = tmp_path / "devices/pci0000:00/0000:00:02.0"
    _write(intel / "uevent", "DRIVER=i915\nPCI_ID=8086:A780\nPCI_SLOT_NAME=0000:00:02.0\n")
    (cards / "card0").mkdir()
    os.symlink(intel, cards / "card0" / "device")
    devices = drm_sysfs.scan_drm(tmp_path)
    assert [d.card for d in devices] == ["card0", "card1"]
    amd = devices[1]
    assert amd.pci_id == "1002:73bf" and amd.slot == "0000:0b:00.0"
    assert amd.vram_total == 17163091968
    gpus = drm_sysfs.gpus_from_drm(devices)
    assert len(gpus) == 1 and gpus[0].drm_card == "card1"


def test_lspci_classes() -> None:
    text = (
        "03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] "
        "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [1002:744c] (rev c8)\n"
        "0000:c1:00.0 Processing accelerators [1200]: Advanced Micro Devices, Inc. [AMD/ATI] "
        "Aqua Vanjaram [Instinct MI300X] [1002:74a1]\n"
        "00:02.0 VGA compatible controller [0300]: Intel Corporation Device [8086:a780] (rev 04)\n"
        "03:00.1 Audio device [0403]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 HDMI/DP "
        "Audio [1002:ab30]\n"
    )
    gpus = lspci_parse.parse_lspci(text)
    assert [g.pci_id for g in gpus] == ["1002:744c", "1002:74a1"]
    assert gpus[0].bdf == "0000:03:00.0" and gpus[1].bdf == "0000:c1:00.0"
    assert gpus[1].name == "Aqua Vanjaram [Instinct MI300X]"


# Plain ``lspci`` (no -nn) prints "<slot> <class name>: <vendor> <device>": pci.ids names, or
# "Device xxxx" for an id pci.ids lacks (pciutils lib/names.c format_name_pair, commit 06f9ecf3;
# lspci.c show_terse, commit 001b9ac6). 7551 is "Navi 48 [Radeon AI PRO R9700]" in pci.ids
# 2026.05.24 (pciutils/pciids 006181e2); older pci.ids copies lack it, hence "Device 7551".
LSPCI_PLAIN = """\
00:02.0 VGA compatible controller: Intel Corporation Device a780 (rev 04)
03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 7551 (rev c0)
\tSubsystem: Advanced Micro Devices, Inc. [AMD/ATI] Device 0e3b
\tKernel driver in use: amdgpu
\tKernel modules: amdgpu
03:00.1 Audio device: Advanced Micro Devices, Inc. [AMD/ATI] Navi 48 HDMI/DP Audio Controller
0b:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX \
7900 XT/7900 XTX/7900 GRE/7900M] (rev c8) (prog-if 00 [VGA controller])
\tKernel driver in use: vfio-pci
0c:00.0 Display controller: Advanced Micro Devices, Inc. [AMD/ATI] Aqua Vanjaram [Instinct MI300X]
0d:00.0 Non-Essential Instrumentation: Advanced Micro Devices, Inc. [AMD] Device 14c9
"""


def test_lspci_plain_takes_ids_only_from_the_text() -> None:
    devices = lspci_parse.parse_devices(LSPCI_PLAIN)
    assert [(d.slot, d.device_id, d.name, d.form) for d in devices] == [
        ("0000:03:00.0", "7551", "", "lspci"),
        ("0000:0b:00.0", None, "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", "lspci"),
        ("0000:0c:00.0", None, "Aqua Vanjaram [Instinct MI300X]", "lspci"),
    ]
    # lspci -k (pciutils ls-kernel.c, commit 17ec7e70): "\tKernel driver in use: <name>"
    assert [d.driver for d in devices] == ["amdgpu", "vfio-pci", None]
    gpus = lspci_parse.parse_lspci(LSPCI_PLAIN)
    assert [g.pci_id for g in gpus] == ["1002:7551", None, None]
    assert lspci_parse.looks_like_lspci(LSPCI_PLAIN)
    assert lspci_parse.lspci_form(LSPCI_PLAIN) == "lspci"


def test_lspci_numeric_and_unknown_nn_device() -> None:
    text = (
        "03:00.0 0300: 1002:744c (rev c8)\n"
        "03:00.1 0403: 1002:ab30\n"
        "00:02.0 0300: 8086:a780 (rev 04)\n"
        "0b:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] "
        "Device [1002:7551] (rev c0)\n"
    )
    devices = lspci_parse.parse_devices(text)
    assert [(d.slot, d.device_id, d.name, d.form) for d in devices] == [
        ("0000:03:00.0", "744c", "", "lspci -n"),
        ("0000:0b:00.0", "7551", "", "lspci -nn"),  # "Device" is no name
    ]
    assert lspci_parse.lspci_form(text) == "lspci -nn"


def test_lspci_same_slot_twice_keeps_the_id() -> None:
    text = (
        "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 "
        "[Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] (rev c8)\n"
        "03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] "
        "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [1002:744c] (rev c8)\n"
    )
    (gpu,) = lspci_parse.parse_lspci(text)
    assert gpu.pci_id == "1002:744c" and gpu.name.startswith("Navi 31")


def test_lspci_cut_last_line() -> None:
    whole = LSPCI_PLAIN.splitlines()[1]
    assert lspci_parse.last_line_cut(LSPCI_PLAIN) is None
    assert lspci_parse.last_line_cut(whole[:50]) == whole[:50].strip()  # in the vendor name
    assert lspci_parse.last_line_cut(whole[:-2]) == whole[:-2]  # inside "(rev c0)"
    nn = "0b:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi"
    assert lspci_parse.last_line_cut(nn) == nn
    assert lspci_parse.last_line_cut("no lspci here") is None
    assert lspci_parse.parse_lspci(whole[:50]) == []


CIM = """

Name                 : AMD Radeon RX 7900 XTX
AdapterRAM           : 4293918720
PNPDeviceID          : PCI\\VEN_1002&DEV_744C&SUBSYS_471E1DA2&REV_C8\\6&1E2
                       3A4B&0&00000019
DriverVersion        : 32.0.21013.1000

Name                 : AMD Radeon(TM) Graphics
AdapterRAM           : 536870912
PNPDeviceID          : PCI\\VEN_1002&DEV_164E&SUBSYS_88771043&REV_C9\\4&2A3&0&0041
DriverVersion        : 32.0.21013.1000

Name                 : Microsoft Basic Display Adapter
PNPDeviceID          : ROOT\\BasicDisplay\\0000

"""


def test_cim_listing_with_wrapped_values() -> None:
    controllers = windows_gpu.parse_cim_listing(CIM)
    assert [c.pci_id for c in controllers] == ["1002:744c", "1002:164e", None]
    assert controllers[0].pnp_device_id.endswith("3A4B&0&00000019")  # type: ignore[union-attr]
    gpus, notes = windows_gpu.gpus_from_controllers(controllers)  # pasted: no registry
    assert [(g.pci_id, g.bdf, g.vram_bytes) for g in gpus] == [
        ("1002:744c", None, None),
        ("1002:164e", None, 536870912),
    ]
    assert notes == [windows_gpu.capped_note("AMD Radeon RX 7900 XTX", 4293918720)]
    assert notes[0].startswith(
        "AMD Radeon RX 7900 XTX: Windows lists 4,293,918,720 bytes of video memory (AdapterRAM), "
        "a 32-bit value capped just under 4 GiB"
    )


def test_powershell_json_single_controller_and_odd_fields() -> None:
    # ConvertTo-Json writes a one-element list as a bare object; PowerShell 5.1 escapes "&".
    text = (
        r'{"controllers":{"Name":"AMD Radeon RX 7900 XTX","AdapterRAM":4293918720,'
        r'"PNPDeviceID":"PCI\\VEN_1002\u0026DEV_744C\u0026SUBSYS_1\u0026REV_C8\\1",'
        r'"DriverVersion":"32.0.21013.1000"}}'
    )
    (ctl,) = windows_gpu.parse_powershell_json(text)
    assert ctl == windows_gpu.VideoController(
        "AMD Radeon RX 7900 XTX",
        4293918720,
        "PCI\\VEN_1002&DEV_744C&SUBSYS_1&REV_C8\\1",
        "32.0.21013.1000",
    )
    odd = {"controllers": [{"Name": None, "AdapterRAM": "4 GB", "PNPDeviceID": 7}, "x"]}
    assert windows_gpu.parse_powershell_json(json.dumps(odd)) == [
        windows_gpu.VideoController("Unknown display adapter", None, None, None)
    ]
    assert windows_gpu.parse_powershell_json("{}") == []


HIPINFO = """
--------------------------------------------------------------------------------
device#                           0
Name:                             AMD Radeon RX 7900 XTX
pciBusID:                         3
pciDeviceID:                      0
pciDomainID:                      0
multiProcessorCount:              48
totalGlobalMem:                   23.98 GB
gcnArchName:                      gfx1100
isIntegrated:                     0
--------------------------------------------------------------------------------
device#                           1
Name:                             AMD Radeon(TM) Graphics
pciBusID:                         19
pciDeviceID:                      0
pciDomainID:                      0
totalGlobalMem:                   0.50 GB
gcnArchName:                      gfx1036
isIntegrated:                     1
"""


def test_hipinfo() -> None:
    assert windows_gpu.looks_like_hipinfo(HIPINFO)
    gpus = windows_gpu.parse_hipinfo(HIPINFO)
    assert [(g.gfx, g.integrated) for g in gpus] == [("gfx1100", False), ("gfx1036", True)]
    assert [g.bdf for g in gpus] == ["0000:03:00.0", "0000:13:00.0"]  # pciBusID is decimal
    assert gpus[0].vram_bytes == int(23.98 * 2**30)
