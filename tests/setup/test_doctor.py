"""``rocmpanel doctor``: output forms, exit codes, captured input, no Qt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocmpanel.shell.cli import main

from ..machine.test_parsers import ROCMINFO
from .test_captured import COLLECT_ENV


def _file(tmp_path: Path, text: str, name: str = "out.txt") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["doctor", "--json", "--from", _file(tmp_path, ROCMINFO), "--rocm-version", "6.2.2"]
    )
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"schema", "system", "gpus", "checks"}
    assert set(data["system"]) >= {"os", "os_version", "rocm_version", "driver"}
    (gpu,) = data["gpus"]
    assert set(gpu) >= {"name", "gfx", "pci_id", "vram_bytes", "integrated", "sources", "verdict"}
    assert gpu["gfx"] == "gfx1030" and gpu["vram_bytes"] == 16760832 * 1024
    assert set(gpu["verdict"]) >= {"status", "override", "reason", "source"}
    assert gpu["verdict"]["status"] == "limited"  # consumer RDNA2 card
    for check in data["checks"]:
        assert set(check) >= {"id", "status", "message", "fix"}
        assert check["status"] in ("pass", "warn", "fail", "skip")
    failed = any(c["status"] == "fail" for c in data["checks"])
    assert code == (1 if failed else 0)


def test_exit_code_zero_without_failures(tmp_path: Path, capsys) -> None:
    assert main(["doctor", "--from", _file(tmp_path, ROCMINFO), "--rocm-version", "6.2.2"]) == 0
    out = capsys.readouterr().out
    assert "AMD Radeon RX 6800 XT" in out and "gfx1030" in out


def test_exit_code_one_on_failure(tmp_path: Path, capsys) -> None:
    # collect_env with a CPU-only torch: the torch check fails
    text = COLLECT_ENV.replace(
        "ROCM used to build PyTorch: 6.2.41133-dd7f95766", "ROCM used to build PyTorch: N/A"
    )
    assert main(["doctor", "--from", _file(tmp_path, text)]) == 1
    assert "CPU-only" in capsys.readouterr().out


def test_several_files_and_markdown(tmp_path: Path, capsys) -> None:
    files = [_file(tmp_path, ROCMINFO, "a.txt"), _file(tmp_path, COLLECT_ENV, "b.txt")]
    main(["doctor", "--markdown", "--from", files[0], "--from", files[1]])
    out = capsys.readouterr().out
    assert out.startswith("### rocmpanel doctor report") and "| GPU | gfx |" in out


def test_unknown_text_and_missing_file(tmp_path: Path, capsys) -> None:
    assert main(["doctor", "--from", _file(tmp_path, "just some words")]) == 2
    err = capsys.readouterr().err
    assert "not output rocmpanel recognises" in err and "Traceback" not in err
    assert main(["doctor", "--from", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_captured_tree_and_rocminfo_file(tmp_path: Path, capsys) -> None:
    dev = tmp_path / "card0"
    dev.mkdir()
    (dev / "uevent").write_text("DRIVER=amdgpu\nPCI_ID=1002:73DF\nPCI_SLOT_NAME=0000:0b:00.0\n")
    main(["doctor", "--json", "--sysfs-root", str(dev), "--rocm-version", "6.3.0"])
    data = json.loads(capsys.readouterr().out)
    assert data["gpus"][0]["verdict"] == {
        **data["gpus"][0]["verdict"],
        "status": "override",
        "override": "10.3.0",
    }
    (tmp_path / "empty").mkdir()  # a tree with no GPU: only rocminfo's are found
    main(
        [
            "doctor",
            "--json",
            "--sysfs-root",
            str(tmp_path / "empty"),
            "--rocminfo-file",
            _file(tmp_path, ROCMINFO),
        ]
    )
    assert json.loads(capsys.readouterr().out)["gpus"][0]["sources"] == ["rocminfo"]


def test_windows_judgement_never_suggests_override(tmp_path: Path, capsys) -> None:
    main(
        [
            "doctor",
            "--json",
            "--from",
            _file(tmp_path, ROCMINFO),
            "--os",
            "windows",
            "--rocm-version",
            "6.2.4",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert data["system"]["os"] == "windows"
    assert all(g["verdict"]["override"] is None for g in data["gpus"])


def test_doctor_imports_no_qt(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from rocmpanel.shell.cli import main\n"
        f"main(['doctor', '--json', '--sysfs-root', {str(tmp_path)!r}])\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph', 'torch'))]\n"
        "print('HEAVY', bad)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout


def test_from_files_of_two_machines_are_diagnosed_apart(tmp_path: Path, capsys) -> None:
    from .test_captured import AMD_SMI_R9700, ROCMINFO_7900

    files = [_file(tmp_path, ROCMINFO_7900, "xtx.txt"), _file(tmp_path, AMD_SMI_R9700, "r9700.txt")]
    main(["doctor", "--from", files[0], "--from", files[1]])
    out = capsys.readouterr().out
    assert out.startswith("WARNING: These captures come from 2 different machines")
    assert "===== Machine 1 of 2 =====" in out and "===== Machine 2 of 2 =====" in out
    assert f"{files[0]} (rocminfo)" in out
    main(["doctor", "--json", "--from", files[0], "--from", files[1]])
    data = json.loads(capsys.readouterr().out)
    assert "different machines" in data["system"]["notes"][0]
    assert [[g["gfx"] for g in m["gpus"]] for m in data["machines"]] == [
        ["gfx1100"],
        ["gfx1201", "gfx1201"],
    ]


def test_from_stdin_and_binary(tmp_path: Path, capsys, monkeypatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(ROCMINFO.encode())))
    assert main(["doctor", "--from", "-", "--rocm-version", "6.2.2"]) == 0
    assert "gfx1030" in capsys.readouterr().out
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    assert main(["doctor", "--from", str(binary)]) == 2
    err = capsys.readouterr().err
    assert "binary data" in err and "Traceback" not in err


def test_from_words_fixes_for_the_other_machine(
    tmp_path: Path, capsys, shared_fixtures: Path
) -> None:
    """A pasted RX 6700 XT needs the override: doctor --from gives the commands to run on
    that machine (its OS's shell), not a change of this one."""
    path = str(shared_fixtures / "tools" / "rocminfo_gfx1031_rx6700xt_rocm5.6-5.7.txt")
    assert main(["doctor", "--from", path]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(
        "  [warn] HSA_OVERRIDE_GFX_VERSION: Not set, but this GPU needs "
        "HSA_OVERRIDE_GFX_VERSION=10.3.0 (community workaround). On that machine, the first "
        "line sets it in the open shell; the second keeps it for desktop programs from the "
        "next login (ssh and console logins read ~/.profile)."
    )
    assert lines[at + 1 : at + 3] == [
        "         fix on that machine: export HSA_OVERRIDE_GFX_VERSION=10.3.0",
        "                              mkdir -p ~/.config/environment.d && echo "
        "HSA_OVERRIDE_GFX_VERSION=10.3.0 >> ~/.config/environment.d/60-rocmpanel.conf",
    ]
    assert main(["doctor", "--json", "--from", path]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["other_machine"] is True
    check = next(c for c in data["checks"] if c["id"] == "hsa_override")
    assert (check["fix_kind"], check["fix_env"]) == ("command", None)
    assert check["fix"].startswith("export HSA_OVERRIDE_GFX_VERSION=10.3.0\n")


def test_this_machine_keeps_its_variable_fix(tmp_path: Path, capsys) -> None:
    from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
    from rocmpanel.setup.report import build_report

    gpu = GpuInfo("AMD Radeon RX 6700 XT", gfx="gfx1031", integrated=False)
    system = SystemInfo(os="linux", rocm_version="6.2.2", gpus=(gpu,))
    check = next(c for c in build_report(system, HostFacts()).checks if c.id == "hsa_override")
    assert check.fix is not None and check.fix.name == "HSA_OVERRIDE_GFX_VERSION"
    assert check.fix.text == "Set HSA_OVERRIDE_GFX_VERSION=10.3.0"
