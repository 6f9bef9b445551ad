"""Adding a profile's packages to an existing environment, and ``torch plan``'s profile and
gfx arguments."""

from __future__ import annotations

import json
import sys

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.knowledge.kernels import known_gfx_targets
from rocmpanel.pytorch import add_packages
from rocmpanel.pytorch.add_packages import (
    PackagesPlan,
    packages_job_spec,
    plan_packages,
    torch_rocm,
)
from rocmpanel.pytorch.plan import Mirrors

MIRRORS = Mirrors(pypi_index="https://p.example/simple")


@pytest.mark.parametrize(
    ("version", "rocm"),
    [
        ("2.13.0+rocm7.2", "7.2"),
        ("2.14.0+rocm10.1.0", "10.1.0"),
        ("2.9.1+rocm7.2.1", "7.2.1"),
        ("2.13.0+cpu", None),
        ("2.13.0", None),
        (None, None),
    ],
)
def test_the_rocm_of_a_torch_version(version: str | None, rocm: str | None) -> None:
    assert torch_rocm(version) == rocm


def test_the_installed_versions_come_from_the_interpreter_itself() -> None:
    found = add_packages.installed_versions(sys.executable, ["pytest", "no-such-dist-xyz"])
    assert list(found) == ["pytest"] and found["pytest"] == pytest.__version__


def test_an_interpreter_that_cannot_answer_is_a_panel_error(tmp_path) -> None:
    with pytest.raises(PanelError) as caught:
        add_packages.installed_versions(str(tmp_path / "python"), ["torch"])
    assert (
        caught.value.message == f"The workload Python {str(tmp_path / 'python')!r} does not exist."
    )


def _with_installed(monkeypatch: pytest.MonkeyPatch, installed: dict[str, str]) -> list[str]:
    asked: list[str] = []

    def fake(python: str, names: list[str]) -> dict[str, str]:
        asked.append(python)
        return {n: v for n, v in installed.items() if n in names}

    monkeypatch.setattr(add_packages, "installed_versions", fake)
    return asked


def test_only_the_missing_packages_are_installed_from_pypi(monkeypatch) -> None:
    asked = _with_installed(
        monkeypatch, {"torch": "2.13.0+rocm7.2", "safetensors": "0.8.0", "tokenizers": "0.23"}
    )
    plan = plan_packages(
        "/envs/a/bin/python", "llm", os_name="linux", gfx="gfx1100", mirrors=MIRRORS
    )
    assert asked == ["/envs/a/bin/python"]
    assert plan.missing == (
        "transformers>=4.45",
        "accelerate>=1.1.0",
        "fastapi>=0.110",
        "uvicorn>=0.29",
        "bitsandbytes>=0.50",
    )
    # the installed torch is pinned in the same call: pip must not swap it for PyPI's
    assert plan.pip_args == (
        *plan.missing,
        "torch==2.13.0+rocm7.2",
        "--index-url",
        "https://p.example/simple",
    )
    assert plan.note == "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2)."
    spec = packages_job_spec(plan)
    assert (spec.name, spec.worker, spec.python) == (
        "install transformers>=4.45, accelerate>=1.1.0, fastapi>=0.110, uvicorn>=0.29, "
        "bitsandbytes>=0.50",
        "pip_install",
        "/envs/a/bin/python",
    )
    assert spec.args == (
        "--python",
        "/envs/a/bin/python",
        "--isolated-config",
        "--",
        *plan.pip_args,
    )


@pytest.mark.parametrize(
    ("transformers", "missing"),
    [
        ("4.30.2", ("transformers>=4.45",)),  # too old: pip is asked for the requirement
        ("4.44.99", ("transformers>=4.45",)),  # just below the floor
        ("4.45.0", ()),  # the floor itself
        ("5.24.0", ()),
        ("5.0.0rc1", ()),  # a pre-release above the floor counts
        ("not-a-version", ()),  # pip could not read it either: present, no install loop
    ],
)
def test_an_installed_package_older_than_its_requirement_is_missing(
    monkeypatch, transformers: str, missing: tuple[str, ...]
) -> None:
    _with_installed(
        monkeypatch,
        {
            "torch": "2.13.0+rocm7.2",
            "transformers": transformers,
            "accelerate": "1.1.0",
            "safetensors": "0.8.0",
            "tokenizers": "0.23",
            "bitsandbytes": "0.50.2",
            "fastapi": "0.165.0",
            "uvicorn": "0.55.0",
        },
    )
    plan = plan_packages(
        "/envs/a/bin/python", "llm", os_name="linux", gfx="gfx1100", mirrors=MIRRORS
    )
    assert plan.missing == missing
    pinned = (*missing, "torch==2.13.0+rocm7.2", "--index-url", "https://p.example/simple")
    assert plan.pip_args == (pinned if missing else ())
    assert plan.present["transformers"] == transformers


def test_an_old_accelerate_and_bitsandbytes_are_missing(monkeypatch) -> None:
    _with_installed(
        monkeypatch,
        {
            "torch": "2.13.0+rocm7.2",
            "transformers": "4.45.0",
            "accelerate": "0.26.0",  # what transformers 4.4x asked for; 5.x needs 1.1.0
            "safetensors": "0.8.0",
            "tokenizers": "0.23",
            "bitsandbytes": "0.49.2",  # broken ROCm 4-bit decode
            "fastapi": "0.110.0",
            "uvicorn": "0.29.0",
        },
    )
    plan = plan_packages(
        "/envs/a/bin/python", "llm", os_name="linux", gfx="gfx1100", mirrors=MIRRORS
    )
    assert plan.missing == ("accelerate>=1.1.0", "bitsandbytes>=0.50")


def test_a_cpu_torch_gets_no_bitsandbytes_and_the_panels_own_python_is_named(monkeypatch) -> None:
    _with_installed(monkeypatch, {"torch": "2.13.0+cpu"})
    plan = plan_packages("", "llm", os_name="linux", gfx="gfx1100", mirrors=MIRRORS)
    assert plan.missing == (
        "transformers>=4.45",
        "accelerate>=1.1.0",
        "safetensors",
        "tokenizers",
        "fastapi>=0.110",
        "uvicorn>=0.29",
    )
    assert plan.note == (
        "4-bit on the GPU: not available with a torch built without ROCm (a CPU or CUDA "
        "build), so bitsandbytes is not installed. Chat still works on the CPU."
    )
    spec = packages_job_spec(plan, isolate_pip_config=False)
    assert spec.python == "" and spec.args[:3] == ("--python", sys.executable, "--")


def test_without_torch_nothing_is_installed(monkeypatch) -> None:
    _with_installed(monkeypatch, {})
    with pytest.raises(PanelError) as caught:
        plan_packages("/p/python", "llm", os_name="linux", gfx="gfx1100", mirrors=MIRRORS)
    assert caught.value.message == (
        "torch is not installed in /p/python, so its chat packages cannot be added: pip would "
        "fetch a torch without ROCm support with them. Install PyTorch first (the install plan "
        "makes a new environment with the chat packages), or make an environment with torch "
        "active."
    )


def test_nothing_missing_makes_no_job() -> None:
    nothing = PackagesPlan("/p/python", "llm", (), {"torch": "2.13.0+rocm7.2"}, ())
    with pytest.raises(PanelError) as caught:
        packages_job_spec(nothing)
    assert caught.value.message == (
        "Nothing to install: every package of the profile is there already."
    )


# -- the CLI --------------------------------------------------------------------------------
def test_gfx_knows_every_target_doctor_knows() -> None:
    from rocmpanel.knowledge import compat_data
    from rocmpanel.machine import pci_ids
    from rocmpanel.pytorch.cli import known_gfx

    compat = compat_data.load()
    doctor: set[str] = set()
    for release in compat.releases:
        doctor |= release.supported | release.deprecated | release.runtime_only
    doctor |= {e.gfx for e in pci_ids.load_table().devices.values() if e.gfx}
    assert {"gfx1036", "gfx90c", "gfx1151", "gfx1201"} <= doctor <= known_gfx_targets()
    assert all(known_gfx(g) == g for g in sorted(doctor))
    assert known_gfx(" GFX1100 ") == "gfx1100"


def test_a_bad_gfx_gets_close_matches_and_exit_code_2(capsys) -> None:
    from rocmpanel.shell.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["torch", "plan", "--gfx", "gfx1101x"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(
        "rocmpanel torch plan: error: argument --gfx: 'gfx1101x' is not a GPU target rocmpanel "
        "knows; did you mean gfx1101 or gfx1201 or gfx1151? Known targets: gfx803, gfx900,"
    )
    assert "Traceback" not in err
    with pytest.raises(SystemExit) as exited:
        main(["torch", "install", "--gfx", "1100"])
    assert exited.value.code == 2
    assert "did you mean gfx1100" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("rx7900", "AMD GPUs numbered 7900 are gfx1100, so pass --gfx gfx1100."),
        ("RX580", "AMD GPUs numbered 580 are gfx803, so pass --gfx gfx803."),
        (
            "rx6800",
            "AMD GPUs numbered 6800 are gfx1030 or gfx1031 or gfx1032 depending on the exact "
            "model.",
        ),
    ],
)
def test_a_product_name_for_gfx_gets_its_target(capsys, given: str, hint: str) -> None:  # type: ignore[no-untyped-def]
    from rocmpanel.shell.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["torch", "plan", "--gfx", given])
    assert exited.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        f"'{given}' is not a GPU target rocmpanel knows; it looks like a product name: {hint}"
        in err
    )


def test_plan_json_shows_the_profiles_packages(capsys) -> None:
    from rocmpanel.shell.cli import main

    base = ["torch", "plan", "--gfx", "gfx1030", "--rocm", "7.2.4", "--python", "3.12"]
    assert main([*base, "--os", "linux", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"] == "llm" and data["four_bit_gpu"] is True
    assert data["extra_packages"] == [
        "transformers>=4.45",
        "accelerate>=1.1.0",
        "safetensors",
        "tokenizers",
        "fastapi>=0.110",
        "uvicorn>=0.29",
        "bitsandbytes>=0.50",
    ]
    # gfx906's torch is built for ROCm 6.3: no bitsandbytes library for it
    gfx906 = ["torch", "plan", "--gfx", "gfx906", "--rocm", "7.2.4", "--python", "3.12"]
    assert main([*gfx906, "--os", "linux", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["four_bit_gpu"] is False
    assert data["extra_packages"] == [
        "transformers>=4.45",
        "accelerate>=1.1.0",
        "safetensors",
        "tokenizers",
        "fastapi>=0.110",
        "uvicorn>=0.29",
    ]
    assert main([*base, "--os", "linux", "--json", "--profile", "pytorch"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["profile"], data["extra_packages"], data["extra_pip_args"]) == (
        "pytorch",
        [],
        [],
    )
    with pytest.raises(SystemExit) as exited:
        main([*base, "--profile", "chat"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "rocmpanel torch plan: error: argument --profile: 'chat' is not an install profile "
        "(expected pytorch or llm)"
    )


def test_plan_text_lists_what_the_profile_adds(capsys) -> None:
    from rocmpanel.shell.cli import main

    argv = ["torch", "plan", "--gfx", "gfx1100", "--rocm", "7.2.4", "--os", "linux"]
    assert main([*argv, "--python", "3.12"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("Profile: PyTorch + local LLM (llm)")
    assert out[start + 1 : start + 3] == [
        "  + transformers>=4.45: loads the model and its tokenizer (the chat worker supports "
        "4.45 and later, transformers 5 included)",
        "  + accelerate>=1.1.0: places the weights on the GPU while they load (device_map); "
        "transformers 5 needs 1.1.0 or newer",
    ]
    assert "4-bit on the GPU: available (gfx1100, torch built for ROCm 7.2)." in out
