"""What the command line says: hints said once and naming the command typed, help texts
that are true, refused values quoted short, next steps after a Python without torch, and
fix texts worded for where they are shown (the GUI names its buttons, the CLI its commands).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rocmpanel.pytorch import cli as torch_cli
from rocmpanel.pytorch import plan_inputs
from rocmpanel.shell.cli import main

NO_GPU = plan_inputs.Machine("linux", None, None, note="No GPU was found (a test).")
NEXT_STEP = (
    "Next: `rocmpanel torch plan` shows the PyTorch build for this GPU, and "
    "`rocmpanel torch install` installs it into a new environment."
)


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The last line of an argument error (exit status 2)."""
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


# -- 1. no GPU: the hint once, naming the command typed -----------------------------------------
@pytest.mark.parametrize("action", ["plan", "install"])
def test_no_gpu_gives_the_hint_once_with_the_command_typed(
    action: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(plan_inputs, "detect_machine", lambda: NO_GPU)
    assert main(["torch", action, "--python", "3.12"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[1:] == [
        "note: No GPU was found (a test).",
        "No install: No AMD GPU was detected, so there is no GPU to pick a build for.",
        "To plan for a GPU anyway, give its gfx target: "
        f"rocmpanel torch {action} --gfx gfx1100 (for example).",
    ]
    assert err == ""


# -- 2. the profile's label --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("profile", "line"),
    [("llm", "Profile: PyTorch + local LLM (llm)"), ("pytorch", "Profile: PyTorch (pytorch)")],
)
def test_plan_names_the_profile_as_the_tab_does(
    profile: str, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["torch", "plan", "--gfx", "gfx1100", "--os", "linux", "--python", "3.12"]
    assert main([*argv, "--profile", profile]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [x for x in out if x.startswith("Profile:")] == [line]


# -- 3. torch's help ---------------------------------------------------------------------------
def test_torch_help_names_the_profile_option(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_help(capsys, "torch").split())
    assert (
        "plan and install take --profile pytorch|llm (default llm: also the packages Chat "
        "needs)." in out
    )


def test_the_profile_help_says_what_a_plan_can_leave_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = " ".join(_help(capsys, "torch", "plan").split())
    assert (
        "--profile {pytorch,llm} what to install: pytorch (torch and the build's companions: "
        "torchvision, torchaudio where the build has them) or llm (also transformers, "
        "accelerate, safetensors, tokenizers and, where it works, bitsandbytes for 4-bit "
        "chat; the default)" in out
    )


def test_torch_envs_json_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_help(capsys, "torch", "envs").split())
    assert "--json print the environments and interpreters as JSON" in out


# -- 4. chat's help ----------------------------------------------------------------------------
def test_chat_help_explains_every_number(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_help(capsys, "chat").split())
    for text in (
        "--max-new-tokens N longest reply, in tokens (1..65536; default: from the settings)",
        "--system TEXT system prompt (default: from the settings)",
        "--temperature T 0: always the likeliest token; higher: more varied (0..5; default: "
        "from the settings)",
        "--context TOKENS context length in tokens (256..1048576; default: from the settings)",
        "--seed N sampling seed (-1: a random one, the default)",
        "--python PATH workload Python interpreter (default: the active one)",
    ):
        assert text in out


# -- 5. env's help wraps -----------------------------------------------------------------------
def test_env_help_fits_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = _help(capsys, "env")
    assert [line for line in out.splitlines() if len(line) > 79] == []
    assert (
        "Edit environment variables in persistent stores: on Linux\n"
        "~/.config/environment.d/60-rocmpanel.conf and a managed block in ~/.profile, on\n"
        "Windows HKCU\\Environment; 'session' is for jobs rocmpanel starts only.\n"
    ) in out
    assert "\n  `env set PATH /opt/rocm/bin --prepend` keeps $PATH." in out  # a command whole


# -- 6. --gfx: long values quoted short, target IDs accepted, lower case after ';' --------------
def test_a_10_kb_gfx_value_is_quoted_short(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, "torch", "plan", "--gfx", "x" * 10_000)
    assert err.startswith(
        "rocmpanel torch plan: error: argument --gfx: "
        f"'{'x' * 40}…' (10000 characters) is not a GPU target rocmpanel knows; known "
        "targets: gfx803, gfx900,"
    )
    assert len(err) < 1000


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("", "''"),
        ("x" * 40, repr("x" * 40)),
        ("x" * 41, f"'{'x' * 40}…' (41 characters)"),
        ("it's" + "y" * 50, f'"it\'s{"y" * 36}…" (54 characters)'),
    ],
)
def test_quoted_cuts_at_40_characters(text: str, quoted: str) -> None:
    assert torch_cli.quoted(text) == quoted


@pytest.mark.parametrize(
    ("given", "target"),
    [
        ("gfx1100:xnack-", "gfx1100"),
        ("gfx90a:sramecc+:xnack-", "gfx90a"),
        (" GFX942:SRAMECC+ ", "gfx942"),
        ("gfx1030", "gfx1030"),
    ],
)
def test_rocminfo_target_ids_are_their_base_target(given: str, target: str) -> None:
    assert torch_cli.known_gfx(given) == target
    assert torch_cli.gfx_target(given) == target


def test_the_plan_uses_the_base_target(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["torch", "plan", "--gfx", "gfx90a:sramecc+:xnack-", "--os", "linux"]
    assert main([*argv, "--python", "3.12", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gfx"] == "gfx90a"


def test_a_bad_target_id_and_a_bad_validate_target_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _usage_error(capsys, "torch", "plan", "--gfx", "gfx9999:xnack-")
    assert err.startswith(
        "rocmpanel torch plan: error: argument --gfx: 'gfx9999:xnack-' is not a GPU target "
        "rocmpanel knows; did you mean "
    )
    assert "? Known targets: gfx803," in err
    err = _usage_error(capsys, "torch", "validate", "--gfx", "gpu1:xnack-")
    assert err == (
        "rocmpanel torch validate: error: argument --gfx: 'gpu1:xnack-' is not a gfx target "
        "name (expected gfx followed by 3 or 4 hex digits, such as gfx1100 or gfx90a)"
    )


# -- 7. a Python without torch: the next command -----------------------------------------------
def test_probe_of_a_python_without_torch_names_the_next_command(
    python_without_torch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "--python", python_without_torch]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "Preset: none",
        "torch: not importable (import torch failed: ModuleNotFoundError: No module named 'torch')",
        NEXT_STEP,
    ]
    assert main(["probe", "--python", python_without_torch, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["torch_imported"] is False  # JSON alone


def test_validate_on_a_python_without_torch_names_the_next_command(
    python_without_torch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["torch", "validate", "--python", python_without_torch, "--gfx", "gfx1100:xnack-"]
    assert main([*argv, "--quick"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["Run #1: 0 pass, 1 fail, 15 skip (completed). Preset: none.", NEXT_STEP]


def test_probe_and_validate_name_the_active_preset(
    python_without_torch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worker reports its preset before it imports torch, so even a Python without
    torch names it."""
    assert main(["presets", "use", "debugging"]) == 0
    capsys.readouterr()
    assert main(["probe", "--python", python_without_torch]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "Preset: Debugging"
    argv = ["torch", "validate", "--python", python_without_torch, "--gfx", "gfx1100", "--quick"]
    assert main(argv) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "Run #1: 0 pass, 1 fail, 15 skip (completed). Preset: Debugging."


# -- 8. --activate of a name that is nothing ---------------------------------------------------
def test_activate_of_an_unknown_name_says_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["torch", "envs", "--activate", "nope"]) == 2
    assert capsys.readouterr() == (
        "",
        "rocmpanel torch: No managed environment is named nope, and nope is not a Python "
        "interpreter. `rocmpanel torch envs` lists them.\n",
    )
    assert main(["torch", "envs", "--activate", sys.executable]) == 0  # a real one still goes
    assert capsys.readouterr().out == f"Active workload Python: {sys.executable}\n"


# -- 9. doctor without a GPU: the demo --------------------------------------------------------
def test_doctor_without_a_gpu_mentions_the_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sys").mkdir()
    rocminfo = tmp_path / "rocminfo.txt"
    rocminfo.write_text("ROCk module is NOT loaded, possibly no GPU devices\n")
    argv = ["doctor", "--sysfs-root", str(tmp_path / "sys"), "--rocminfo-file", str(rocminfo)]
    assert main(argv) == 1
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("No AMD GPU found.")
    assert lines[at + 1] == (
        "To see rocmpanel with recorded AMD GPUs instead, run: rocmpanel --demo"
    )
    assert [x for x in lines if "--demo" in x] == [lines[at + 1]]
    assert main([*argv, "--json"]) == 1
    out = capsys.readouterr().out
    assert json.loads(out)["gpus"] == [] and "--demo" not in out
    assert main([*argv, "--markdown"]) == 1
    assert "--demo" not in capsys.readouterr().out


# -- 10, 11. chat: a folder that fails fails alone; --json failures are JSON -------------------
def test_an_empty_model_folder_fails_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--model", str(tmp_path), "--prompt", "hi"]) == 2
    assert capsys.readouterr() == (
        "",
        "rocmpanel chat: config.json is missing: this is not a Hugging Face model folder. "
        "No weights were found: the folder has no .safetensors files. No tokenizer was found "
        "(tokenizer.json or tokenizer.model).\n",
    )


def test_chat_json_failures_print_one_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--model", str(tmp_path), "--prompt", "hi", "--json"]) == 2
    out, err = capsys.readouterr()
    assert err == "" and out.count("\n") == 1
    assert json.loads(out) == {
        "ok": False,
        "kind": "model",
        "error": "config.json is missing: this is not a Hugging Face model folder. No weights "
        "were found: the folder has no .safetensors files. No tokenizer was found "
        "(tokenizer.json or tokenizer.model).",
    }
    missing = tmp_path / "missing"
    assert main(["chat", "--model", str(missing), "--prompt", "hi", "--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {
        "ok": False,
        "kind": "model",
        "error": f"there is no model folder at {missing}: the path does not exist.",
    }


# -- 12. fix texts: the GUI's words and the CLI's ----------------------------------------------
def test_a_damaged_environment_has_a_gui_fix_and_a_cli_fix(tmp_path: Path) -> None:
    from rocmpanel.pytorch.environments import DamagedEnv

    damaged = DamagedEnv("old", tmp_path / "old", "it is not JSON")
    record = tmp_path / "old" / "rocmpanel-env.json"
    assert damaged.advice == (
        f"Repair {record}, or select it and press Remove… to delete the environment."
    )
    assert damaged.cli_advice == (
        f"Repair {record}, or delete the environment: rocmpanel torch envs --remove old"
    )


def test_the_unprobed_torch_check_names_no_command() -> None:
    from rocmpanel.machine.gpu_model import SystemInfo
    from rocmpanel.setup.checklist_env import torch_check

    check = torch_check(SystemInfo(os="linux"), None)
    assert check.message == (
        "Not checked: the workload Python was not probed. Probe it, or analyse the output of "
        "python -m torch.utils.collect_env run there."
    )
