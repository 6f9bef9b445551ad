"""Windows GPU discovery on Linux through its seams (issue 18 items 3, 5, 7, 11): the
registry (FakeRegistry), the process runner (a fake returning recorded bytes), and the
Windows version facts. Inputs in data/windows/ are written in the tools' real formats:
PowerShell 5.1's ``ConvertTo-Json -Compress`` (which escapes "&" as \\u0026) and hipInfo's
``setw(34)`` columns with CRLF line ends."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path, PureWindowsPath
from typing import Any

import pytest

from rocmpanel.base import subproc
from rocmpanel.machine import detect, rocm_version, windows_gpu
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.machine.windows_gpu import DeviceKeys, WindowsGpuQuery

# LocationInformation as the Enum key holds it (the indirect string; SetupAPI shows only
# its text, "PCI bus 3, device 0, function 0").
REAL_XTX_LOCATION = "@System32\\drivers\\pci.sys,#65536;PCI bus %1, device %2, function %3;(3,0,0)"

DATA = Path(__file__).with_name("data") / "windows"
GIB = 2**30

ENUM = "HKLM\\SYSTEM\\CurrentControlSet\\Enum\\"
DISPLAY = "{4d36e968-e325-11ce-bfc1-08002be10318}"
CLASS = f"HKLM\\SYSTEM\\CurrentControlSet\\Control\\Class\\{DISPLAY}\\"
XTX_PNP = "PCI\\VEN_1002&DEV_744C&SUBSYS_471E1DA2&REV_C8\\6&1E23A4B&0&00000019"
IGPU_PNP = "PCI\\VEN_1002&DEV_164E&SUBSYS_88771043&REV_C9\\4&2A3&0&0041"
XTX_VRAM = 25753026560  # 7900 XTX: qwMemorySize of its own class subkey
XT_VRAM = 21458059264  # 7900 XT, same device id 744c: a subkey left by an earlier card
CAPPED = (
    "AMD Radeon RX 7900 XTX: Windows lists 4,293,918,720 bytes of video memory (AdapterRAM), "
    "a 32-bit value capped just under 4 GiB, and the exact size (registry value "
    "HardwareInformation.qwMemorySize) could not be read, so its VRAM is shown as unknown."
)


def _machine(fake: Any) -> Any:
    """Enum keys of a 7900 XTX (bus 3) and a Raphael iGPU (bus 19 = 0x13); the class subkey
    0000 is a 7900 XT removed earlier, 0001 the XTX, 0002 the iGPU (no VRAM values)."""
    fake.set(ENUM + XTX_PNP, "LocationInformation", "PCI bus 3, device 0, function 0")
    fake.set(ENUM + XTX_PNP, "Driver", f"{DISPLAY}\\0001")
    fake.set(ENUM + IGPU_PNP, "LocationInformation", "PCI bus 19, device 0, function 0")
    fake.set(ENUM + IGPU_PNP, "Driver", f"{DISPLAY}\\0002")
    fake.set(CLASS + "0000", "MatchingDeviceId", "pci\\ven_1002&dev_744c")
    fake.set(CLASS + "0000", "HardwareInformation.qwMemorySize", XT_VRAM, fake.REG_QWORD)
    fake.set(CLASS + "0001", "MatchingDeviceId", "pci\\ven_1002&dev_744c")
    fake.set(CLASS + "0001", "HardwareInformation.qwMemorySize", XTX_VRAM, fake.REG_QWORD)
    fake.set(CLASS + "0002", "MatchingDeviceId", "pci\\ven_1002&dev_164e")
    return fake


def _controllers() -> list[windows_gpu.VideoController]:
    return windows_gpu.parse_powershell_json((DATA / "cim_rx7900xtx_raphael.json").read_text())


# -- the registry: slot and VRAM of the right card (items 3, 7) -------------------------------


def test_driver_value_picks_the_cards_own_class_subkey(fake_registry: Any) -> None:
    gpus, notes = windows_gpu.gpus_from_controllers(_controllers(), _machine(fake_registry))
    assert [(g.name, g.pci_id, g.bdf, g.vram_bytes) for g in gpus] == [
        ("AMD Radeon RX 7900 XTX", "1002:744c", "0000:03:00.0", XTX_VRAM),
        ("AMD Radeon(TM) Graphics", "1002:164e", "0000:13:00.0", 536870912),  # AdapterRAM
    ]
    assert notes == []
    assert fake_registry.open_handles == 0  # every key opened was closed


def test_missing_enum_key_falls_back_to_cim_with_the_note(fake_registry: Any) -> None:
    fake_registry.set(CLASS + "0001", "HardwareInformation.qwMemorySize", XTX_VRAM, 11)
    assert windows_gpu.read_device_keys(fake_registry, XTX_PNP) == DeviceKeys(found=False)
    gpus, notes = windows_gpu.gpus_from_controllers(_controllers(), fake_registry)
    assert [(g.bdf, g.vram_bytes) for g in gpus] == [(None, None), (None, 536870912)]
    assert notes == [CAPPED]


class _Locked:
    """A FakeRegistry whose keys under ``locked`` refuse to open, as an ACL would."""

    def __init__(self, fake: Any, locked: str) -> None:
        self._fake, self._locked = fake, locked.upper()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fake, name)

    def OpenKey(self, key: Any, sub_key: str, reserved: int = 0, access: int = 0) -> Any:
        if f"{key}\\{sub_key}".upper().startswith(self._locked):
            raise PermissionError(5, "Access is denied")
        return self._fake.OpenKey(key, sub_key, reserved, access)


def test_unreadable_class_subkey_keeps_the_slot_and_notes_the_cap(fake_registry: Any) -> None:
    locked = _Locked(_machine(fake_registry), "HKEY_LOCAL_MACHINE\\" + CLASS[5:] + "0001")
    assert windows_gpu.read_device_keys(locked, XTX_PNP) == DeviceKeys(True, "0000:03:00.0")
    gpus, notes = windows_gpu.gpus_from_controllers(_controllers(), locked)
    assert (gpus[0].bdf, gpus[0].vram_bytes) == ("0000:03:00.0", None)
    assert notes == [CAPPED]


def test_a_driver_value_that_is_no_class_subkey_is_not_followed(fake_registry: Any) -> None:
    _machine(fake_registry).set(ENUM + XTX_PNP, "Driver", "..\\..\\Enum\\PCI")
    assert windows_gpu.read_device_keys(fake_registry, XTX_PNP) == DeviceKeys(True, "0000:03:00.0")


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"HardwareInformation.qwMemorySize": (XTX_VRAM, 11)}, XTX_VRAM),  # REG_QWORD
        ({"hardwareinformation.QWMEMORYSIZE": (XTX_VRAM.to_bytes(8, "little"), 3)}, XTX_VRAM),
        ({"HardwareInformation.MemorySize": (2 * GIB, 4)}, 2 * GIB),  # REG_DWORD, bytes
        ({"HardwareInformation.MemorySize": ((2 * GIB).to_bytes(4, "little"), 3)}, 2 * GIB),
        ({"HardwareInformation.MemorySize": (8192, 4)}, 8 * GIB),  # megabytes, as documented
        ({"HardwareInformation.MemorySize": (0xFFFFFFFF, 4)}, None),  # the 32-bit cap
        ({"HardwareInformation.MemorySize": (b"\x00\x00\x00\x80\x00", 3)}, None),  # 5 bytes
        ({"HardwareInformation.qwMemorySize": ("25753026560", 1)}, None),  # REG_SZ
        (
            {
                "HardwareInformation.qwMemorySize": (0, 11),
                "HardwareInformation.MemorySize": (0x80000000, 4),
            },
            2 * GIB,
        ),
        ({}, None),
    ],
)
def test_vram_value_forms(values: dict[str, tuple[Any, int]], expected: int | None) -> None:
    assert windows_gpu.vram_from_driver_key(values) == expected


@pytest.mark.parametrize(
    ("text", "bdf"),
    [
        ("PCI bus 3, device 0, function 0", "0000:03:00.0"),
        (REAL_XTX_LOCATION, "0000:03:00.0"),  # as the Enum key holds it
        (
            "@System32\\drivers\\pci.sys,#65536;PCI-Bus %1, Gerät %2, Funktion %3;(193,0,1)",
            "0000:c1:00.1",
        ),
        ("@System32\\drivers\\pci.sys,#65536;PCI bus %1, device %2, function %3;(256,0,0)", None),
        ("@System32\\drivers\\pci.sys,#65536;PCI bus %1, device %2, function %3;", None),
        ("PCI bus 193, device 0, function 0", "0000:c1:00.0"),  # decimal in, hex out
        ("PCI bus 255, device 31, function 7 ", "0000:ff:1f.7"),
        ("pci bus 3, device 0, function 0", "0000:03:00.0"),
        ("PCI bus 256, device 0, function 0", None),
        ("PCI bus 3, device 32, function 0", None),
        ("PCI bus 3, device 0, function 8", None),
        ("PCI bus 3, device 0", None),
        ("Internal High Definition Audio Bus", None),
        ("", None),
        (None, None),
        (3, None),
    ],
)
def test_location_information(text: object, bdf: str | None) -> None:
    assert windows_gpu.bdf_from_location(text) == bdf


# -- the live query through fake seams (items 3, 5, 11) --------------------------------------


class _Runner:
    """Stands in for subproc.run: records each call and answers with recorded bytes."""

    def __init__(self, answers: dict[str, bytes | Exception]) -> None:
        self.answers, self.calls = answers, []

    def __call__(self, argv: list[str], **kwargs: Any) -> Any:
        self.calls.append((argv, kwargs))
        answer = self.answers[PureWindowsPath(argv[0]).name]
        if isinstance(answer, Exception):
            raise answer
        return type("Done", (), {"stdout": answer, "returncode": 0})()


def _query(runner: _Runner, fake: Any, tmp_path: Path, *, hip: bool = True) -> WindowsGpuQuery:
    env = {}
    if hip:
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "hipInfo.exe").write_bytes(b"MZ")
        env["HIP_PATH"] = str(tmp_path)
    tools = {"powershell": "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"}
    return WindowsGpuQuery(
        run=runner, reg=fake, which=tools.get, env=env, platform="win32", timeout=7
    )


def test_live_windows_detection_finds_one_gpu_per_gpu(fake_registry: Any, tmp_path: Path) -> None:
    runner = _Runner(
        {
            "powershell.exe": (DATA / "cim_rx7900xtx_raphael.json").read_bytes(),
            "hipInfo.exe": (DATA / "hipinfo_rx7900xtx_raphael.txt").read_bytes(),
        }
    )
    query = _query(runner, _machine(fake_registry), tmp_path)
    detection = detect._detect_windows({"HIP_PATH": "C:\\AMD\\ROCm\\6.2\\"}, query)
    assert detection.system.gpus == (
        GpuInfo(
            name="AMD Radeon RX 7900 XTX",
            gfx="gfx1100",
            pci_id="1002:744c",
            bdf="0000:03:00.0",
            vram_bytes=XTX_VRAM,
            integrated=False,
            sources=("cim", "hipinfo"),
            hip_index=0,  # HIP's own numbers, which HIP_VISIBLE_DEVICES counts in
        ),
        GpuInfo(
            name="AMD Radeon(TM) Graphics",
            gfx="gfx1036",
            pci_id="1002:164e",
            bdf="0000:13:00.0",
            vram_bytes=536870912,
            integrated=True,
            sources=("cim", "hipinfo"),
            hip_index=1,
        ),
    )
    assert detection.system.notes == () and detection.system.rocm_version == "6.2"
    (ps_argv, ps_kw), (hip_argv, hip_kw) = runner.calls
    assert ps_argv[1:4] == ["-NoProfile", "-NonInteractive", "-Command"]
    assert "[Console]::OutputEncoding=New-Object System.Text.UTF8Encoding $false;" in ps_argv[4]
    assert "Get-ItemProperty" not in ps_argv[4]  # the registry is read through winreg
    assert hip_argv == [str(tmp_path / "bin" / "hipInfo.exe")]
    for kwargs in (ps_kw, hip_kw):  # bytes, decoded as UTF-8 here; no console window
        assert kwargs == {"capture_output": True, "timeout": 7, "check": False, "platform": "win32"}


def test_the_default_runner_adds_create_no_window() -> None:
    assert WindowsGpuQuery()._run is subproc.run
    assert subproc.hidden({"capture_output": True}, "win32")["creationflags"] == 0x08000000


def test_powershell_output_is_utf8_whatever_the_locale(fake_registry: Any, tmp_path: Path) -> None:
    raw = (DATA / "cim_rx580_ru-locale.json").read_bytes()
    assert "Базовый видеоадаптер (Майкрософт)".encode() in raw
    assert [c.name for c in windows_gpu.parse_powershell_json(windows_gpu.decode_output(raw))] == [
        "AMD Radeon RX 580 2048SP",
        "Базовый видеоадаптер (Майкрософт)",
    ]
    runner = _Runner({"powershell.exe": b"\xef\xbb\xbf" + raw})  # with a BOM, as UTF8 writes
    gpus, notes = _query(runner, fake_registry, tmp_path, hip=False).controllers()
    assert [(g.name, g.pci_id, g.vram_bytes) for g in gpus] == [
        ("AMD Radeon RX 580 2048SP", "1002:6fdf", None)
    ]
    assert notes == [CAPPED.replace("AMD Radeon RX 7900 XTX", "AMD Radeon RX 580 2048SP")]


def test_bytes_that_are_not_utf8_are_replaced_not_fatal() -> None:
    cp1251 = "Базовый".encode("cp1251")
    assert windows_gpu.decode_output(b'{"a":"' + cp1251 + b'"}') == '{"a":"' + "\ufffd" * 7 + '"}'
    assert windows_gpu.decode_output(None) == ""


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        (
            subprocess.TimeoutExpired(["powershell"], 7),
            "PowerShell did not list the video controllers within 7 s, so the GPUs it would "
            "name are missing; run the detection again.",
        ),
        (
            b"WARNING: not json",
            "Listing video controllers through PowerShell failed: Expecting value: line 1 "
            "column 1 (char 0)",
        ),
        (
            b"[1, 2]",
            "Listing video controllers through PowerShell failed: expected a JSON "
            "object with a 'controllers' list",
        ),
    ],
)
def test_powershell_failures_become_notes(
    answer: bytes | Exception, note: str, fake_registry: Any, tmp_path: Path
) -> None:
    query = _query(_Runner({"powershell.exe": answer}), fake_registry, tmp_path, hip=False)
    assert query.controllers() == ([], [note])


NO_CONTROLLER = (
    "PowerShell listed no video controller at all, so Windows' device list (WMI) did not "
    "answer; `Get-CimInstance Win32_VideoController` in PowerShell shows its error."
)


@pytest.mark.parametrize(
    "output",
    [
        b"",
        b'{"controllers":[]}',
        b'{"controllers":null}',
        b'{"controllers":{"value":[],"Count":0}}',
    ],
)
def test_no_controller_at_all_is_said(output: bytes, fake_registry: Any, tmp_path: Path) -> None:
    query = _query(_Runner({"powershell.exe": output}), fake_registry, tmp_path, hip=False)
    assert query.controllers() == ([], [NO_CONTROLLER])


def test_the_value_and_count_wrapping_of_powershell_5_is_unwrapped() -> None:
    one = {"Name": "AMD Radeon RX 580", "PNPDeviceID": "PCI\\VEN_1002&DEV_67DF&SUBSYS_0B311002"}
    wrapped = json.dumps({"controllers": {"value": [one, {"Name": "Basic"}], "Count": 2}})
    plain = json.dumps({"controllers": [one, {"Name": "Basic"}]})
    single = json.dumps({"controllers": one})
    names = [[c.name for c in windows_gpu.parse_powershell_json(t)] for t in (wrapped, plain)]
    assert names == [["AMD Radeon RX 580", "Basic"]] * 2
    assert [c.pci_id for c in windows_gpu.parse_powershell_json(single)] == ["1002:67df"]
    # a controller that merely has a property named "value" stays one controller
    odd = json.dumps({"controllers": {"Name": "X", "value": [1]}})
    assert [c.name for c in windows_gpu.parse_powershell_json(odd)] == ["X"]


def test_hipinfo_that_cannot_run_is_absent(fake_registry: Any, tmp_path: Path) -> None:
    runner = _Runner({"hipInfo.exe": OSError(193, "%1 is not a valid Win32 application")})
    assert _query(runner, fake_registry, tmp_path).hipinfo() is None
    no_sdk = WindowsGpuQuery(run=runner, reg=fake_registry, which=lambda n: None, env={})
    assert no_sdk.hipinfo() is None and len(runner.calls) == 1


# -- merging: one GPU per GPU (item 3) --------------------------------------------------------


def test_hipinfo_recording_parses_decimal_bus_ids() -> None:
    gpus = windows_gpu.parse_hipinfo((DATA / "hipinfo_rx7900xtx_raphael.txt").read_text())
    assert [(g.name, g.gfx, g.bdf, g.vram_bytes, g.integrated) for g in gpus] == [
        ("AMD Radeon RX 7900 XTX", "gfx1100", "0000:03:00.0", int(23.98 * GIB), False),
        ("AMD Radeon(TM) Graphics", "gfx1036", "0000:13:00.0", int(0.50 * GIB), True),
    ]


def test_cim_slot_without_domain_matches_hipinfo_by_bus_device_function() -> None:
    records = [
        GpuInfo("AMD Instinct MI210", pci_id="1002:740f", bdf="0000:c1:00.0", sources=("cim",)),
        GpuInfo("AMD Instinct MI210", gfx="gfx90a", bdf="0001:c1:00.0", sources=("hipinfo",)),
    ]
    (gpu,) = detect.merge_gpus(records)
    assert (gpu.bdf, gpu.gfx, gpu.sources) == ("0001:c1:00.0", "gfx90a", ("cim", "hipinfo"))
    # another slot stays another GPU, even with the same name
    moved = [
        records[0],
        GpuInfo("AMD Instinct MI210", gfx="gfx90a", bdf="0000:c4:00.0", sources=("hipinfo",)),
    ]
    assert len(detect.merge_gpus(moved)) == 2


def test_name_fallback_keeps_two_identical_cards_two_each() -> None:
    cim = [
        GpuInfo("AMD Radeon RX 7900 XTX", pci_id="1002:744c", sources=("cim",)),
        GpuInfo("AMD Radeon RX 7900 XTX", pci_id="1002:744c", sources=("cim",)),
    ]
    hip = [
        GpuInfo("AMD Radeon RX 7900 XTX", gfx="gfx1100", bdf="0000:03:00.0", sources=("hipinfo",)),
        GpuInfo("AMD Radeon RX 7900 XTX", gfx="gfx1100", bdf="0000:0b:00.0", sources=("hipinfo",)),
    ]
    # A name two cards share pairs nothing: no CIM card is guessed to be either hipInfo one.
    assert [g.sources for g in detect.merge_gpus(hip + cim)] == [
        ("hipinfo",),
        ("hipinfo",),
        ("cim", "pci-table"),
        ("cim", "pci-table"),
    ]


def test_name_fallback_never_joins_an_integrated_and_a_discrete_gpu() -> None:
    records = [
        GpuInfo("AMD Radeon Graphics", pci_id="1002:164e", sources=("cim",)),  # Raphael iGPU
        GpuInfo("AMD Radeon Graphics", gfx="gfx1102", integrated=False, sources=("hipinfo",)),
    ]
    assert [g.integrated for g in detect.merge_gpus(records)] == [True, False]
    names_differ = [records[0], GpuInfo("AMD Radeon 780M", gfx="gfx1103", sources=("hipinfo",))]
    assert len(detect.merge_gpus(names_differ)) == 2


def test_recorded_ru_locale_listing(shared_fixtures: Path) -> None:
    path = (
        shared_fixtures / "tools/powershell_get-wmiobject_win32_videocontroller_rx580_ru-locale.txt"
    )
    (ctl,) = windows_gpu.parse_cim_listing(path.read_text(encoding="utf-8"))
    assert ctl == windows_gpu.VideoController(
        name="AMD Radeon RX 580 2048SP",
        adapter_ram=4293918720,
        pnp_device_id="PCI\\VEN_1002&DEV_6FDF&SUBSYS_0B311002&REV_EF\\4&B36F5C3&0&0008",
        driver_version="31.0.12044.3",
    )


# -- Windows 11 named right (item 11) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "version", "edition", "text"),
    [
        ("10", "10.0.22631", "Professional", "Windows 11 (10.0.22631)"),  # Python < 3.12
        ("10", "10.0.22000", "Core", "Windows 11 (10.0.22000)"),  # first Windows 11 build
        ("10", "10.0.21999", "Core", "Windows 10 (10.0.21999)"),
        ("10", "10.0.19045", "Professional", "Windows 10 (10.0.19045)"),
        ("11", "10.0.26100", "Professional", "Windows 11 (10.0.26100)"),  # Python >= 3.12
        ("10", "10.0.26100", "ServerDatacenter", "Windows Server (10.0.26100)"),  # 2025
        ("2022Server", "10.0.20348", "ServerStandard", "Windows 2022Server (10.0.20348)"),
        ("10", "", None, "Windows 10"),
        ("10", "10.0", None, "Windows 10 (10.0)"),
        ("", "10.0.x", None, "Windows ? (10.0.x)"),
    ],
)
def test_windows_description(release: str, version: str, edition: str | None, text: str) -> None:
    assert rocm_version.windows_description(release, version, edition) == text


def test_os_description_on_windows_uses_the_build() -> None:
    text = rocm_version.os_description(system="Windows", windows=("10", "10.0.26100", "Core"))
    assert text == "Windows 11 (10.0.26100)"
