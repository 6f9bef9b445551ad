"""Finding the installed ROCm / HIP SDK version and the driver from files."""

from __future__ import annotations

from pathlib import Path

from rocmpanel.machine.rocm_version import (
    amdgpu_driver,
    find_rocm_installs,
    hip_sdk_version,
    os_release,
    rocm_version_linux,
)


def test_rocm_versions_from_info_and_header(tmp_path: Path) -> None:
    info = tmp_path / "rocm-6.2.2" / ".info"
    info.mkdir(parents=True)
    (info / "version").write_text("6.2.2-116\n")
    header = tmp_path / "rocm" / "include" / "rocm-core"
    header.mkdir(parents=True)
    (header / "rocm_version.h").write_text(
        "#define ROCM_VERSION_MAJOR   6\n#define ROCM_VERSION_MINOR   4\n"
        "#define ROCM_VERSION_PATCH   1\n"
    )
    (tmp_path / "rocm-7.0.0").mkdir()  # no metadata: the folder name tells
    installs = find_rocm_installs(tmp_path)
    assert [(Path(i.path).name, i.version) for i in installs] == [
        ("rocm", "6.4.1"),
        ("rocm-6.2.2", "6.2.2"),
        ("rocm-7.0.0", "7.0.0"),
    ]
    assert rocm_version_linux({}, tmp_path)[0] == "6.4.1"
    chosen = {"ROCM_PATH": str(tmp_path / "rocm-6.2.2")}
    assert rocm_version_linux(chosen, tmp_path)[0] == "6.2.2"
    assert rocm_version_linux({}, tmp_path / "missing") == (None, [])


def test_hip_sdk_version() -> None:
    assert hip_sdk_version({"HIP_PATH": "C:\\Program Files\\AMD\\ROCm\\6.2\\"}) == "6.2"
    assert hip_sdk_version({"HIP_PATH_57": "C:\\x"}) == "5.7"
    assert hip_sdk_version({}) is None


def test_driver_and_os(tmp_path: Path) -> None:
    assert amdgpu_driver(tmp_path) is None
    module = tmp_path / "module" / "amdgpu"
    module.mkdir(parents=True)
    assert amdgpu_driver(tmp_path) == "amdgpu"
    (module / "version").write_text("6.8.5\n")
    assert amdgpu_driver(tmp_path) == "amdgpu 6.8.5"
    (tmp_path / "os-release").write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n')
    assert os_release(tmp_path) == "Ubuntu 24.04.1 LTS"
