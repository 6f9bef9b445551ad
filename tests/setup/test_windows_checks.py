"""The Windows-only checklist item: long paths (LongPathsEnabled), read through a fake
registry; shown on Windows only."""

from __future__ import annotations

from rocmpanel.base.enums import CheckStatus
from rocmpanel.jobs import workload
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.machine.host_facts import windows_host_facts
from rocmpanel.machine.long_paths import ENABLE_LONG_PATHS, LongPaths, read_long_paths
from rocmpanel.setup.checklist import Fix, FixKind, run_checks
from rocmpanel.setup.checklist_env import long_paths_check
from rocmpanel.setup.compat import verdicts_for

FILESYSTEM = "HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem"
ENVS = "C:\\Users\\jsmith12\\AppData\\Local\\rocmpanel\\envs"  # 46 characters
ENABLE = (
    'New-ItemProperty -Path "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" '
    "-Name LongPathsEnabled -Value 1 -PropertyType DWORD -Force"
)
WHERE = f" The environments folder, {ENVS}, is 46 characters long."
WHY = (
    ": Windows refuses paths of 260 characters or more, and PyTorch's wheels hold files over "
    "180 characters deep, so installs into deep folders fail (pip: Errno 2 or WinError 206). "
    "rocmpanel gives new environments short folder names to fit; turning long paths on lifts "
    "the limit: run the command in an elevated PowerShell (or enable the Group Policy Computer "
    "Configuration > Administrative Templates > System > Filesystem > Enable Win32 long "
    "paths), then restart rocmpanel."
)
RX7900 = GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", integrated=False)


def check_for(reg) -> tuple[CheckStatus, str, Fix | None]:
    check = long_paths_check(read_long_paths(reg, ENVS))
    assert (check.id, check.title) == ("long_paths", "Windows long paths")
    return check.status, check.message, check.fix


def test_on_passes(fake_registry):
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", 1, fake_registry.REG_DWORD)
    assert check_for(fake_registry) == (
        CheckStatus.PASS,
        "On (LongPathsEnabled is 1): Python and pip may use paths over 260 characters.",
        None,
    )


def test_the_value_name_is_case_insensitive(fake_registry):
    fake_registry.set(FILESYSTEM, "longpathsenabled", 1, fake_registry.REG_DWORD)
    assert check_for(fake_registry)[0] is CheckStatus.PASS


def test_off_warns_with_the_command(fake_registry):
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", 0, fake_registry.REG_DWORD)
    assert check_for(fake_registry) == (
        CheckStatus.WARN,
        "Off (LongPathsEnabled is 0)" + WHY + WHERE,
        Fix(FixKind.COMMAND, ENABLE),
    )


def test_missing_value_is_off(fake_registry):
    fake_registry.set(FILESYSTEM, "NtfsDisable8dot3NameCreation", 2, fake_registry.REG_DWORD)
    assert check_for(fake_registry) == (
        CheckStatus.WARN,
        "Off (LongPathsEnabled is not set; Windows' default is off)" + WHY + WHERE,
        Fix(FixKind.COMMAND, ENABLE),
    )


def test_a_string_value_is_off(fake_registry):
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", "1", fake_registry.REG_SZ)
    status, message, _ = check_for(fake_registry)
    assert status is CheckStatus.WARN
    assert message.startswith(
        "Off (LongPathsEnabled is '1', but Windows reads only a REG_DWORD): Windows refuses"
    )


UNREADABLE = (
    "HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem could not be read, so whether long "
    "paths are on is not known. PowerShell shows it: Get-ItemProperty "
    '"HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" -Name LongPathsEnabled.' + WHERE
)


def test_a_key_that_cannot_be_read_is_a_skip(fake_registry, monkeypatch):
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", 0, fake_registry.REG_DWORD)

    def denied(*args, **kwargs):
        raise PermissionError(5, "Access is denied")

    monkeypatch.setattr(fake_registry, "OpenKey", denied)
    assert check_for(fake_registry) == (CheckStatus.SKIP, UNREADABLE, None)


def test_no_registry_or_no_key_is_a_skip(fake_registry):
    assert check_for(fake_registry) == (CheckStatus.SKIP, UNREADABLE, None)
    assert check_for(None) == (CheckStatus.SKIP, UNREADABLE, None)


def _checks(os_name: str, long_paths: LongPaths | None = None) -> list[tuple[str, CheckStatus]]:
    system = SystemInfo(os=os_name, rocm_version="6.4", gpus=(RX7900,))
    verdicts = verdicts_for(system.gpus, os_name, "6.4")
    checks = run_checks(system, verdicts, HostFacts(long_paths=long_paths), None)
    return [(c.id, c.status) for c in checks]


def test_shown_on_windows_after_the_hip_sdk_and_never_on_linux():
    on = LongPaths(readable=True, data=1, kind=4, envs_path=ENVS)
    ids = [i for i, _ in _checks("windows", on)]
    assert ids[ids.index("rocm_install") + 1] == "long_paths"
    assert ("long_paths", CheckStatus.PASS) in _checks("windows", on)
    assert "long_paths" not in [i for i, _ in _checks("linux", on)]


def test_pasted_windows_output_says_not_known():
    check = long_paths_check(None)
    assert (check.status, check.message) == (
        CheckStatus.SKIP,
        "Not known (not part of the pasted or recorded output).",
    )
    assert ("long_paths", CheckStatus.SKIP) in _checks("windows")


def test_windows_host_facts_read_the_registry_and_the_envs_folder(fake_registry):
    fake_registry.set(FILESYSTEM, "LongPathsEnabled", 1, fake_registry.REG_DWORD)
    facts = windows_host_facts({"HIP_PATH": "C:\\hip", "OTHER": "x"}, fake_registry)
    assert facts.long_paths == LongPaths(
        readable=True, data=1, kind=4, envs_path=str(workload.envs_dir())
    )
    assert facts.env == {"HIP_PATH": "C:\\hip"}
    assert fake_registry.open_handles == 0  # every key it opened was closed


def test_the_command_sets_the_value_windows_reads():
    assert ENABLE_LONG_PATHS == ENABLE
