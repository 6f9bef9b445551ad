"""``rocmpanel chat`` end to end: one-shot --json through a real worker, and refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def rocmpanel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmpanel", "chat", *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_one_shot_json(tiny_model: Path) -> None:
    done = rocmpanel(
        "--model", str(tiny_model), "--precision", "fp32", "--device", "cpu",
        "--prompt", "Hello", "--max-new-tokens", "6", "--temperature", "0", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["reply"] and data["model"]["precision"] == "fp32"
    figures = data["figures"]
    assert 1 <= figures["new_tokens"] <= 6 and figures["ttft_s"] > 0
    assert figures["device"] == "cpu" and figures["peak_memory_bytes"] > 0


def test_refusals_happen_before_any_worker_starts(
    tiny_llama: ModuleType, tiny_model: Path, tmp_path: Path
) -> None:
    no_weights = rocmpanel("--model", str(tiny_llama.without_weights(tmp_path)))
    assert no_weights.returncode == 2
    assert "No weights" in no_weights.stderr
    remote = tiny_llama.needing_remote_code(tiny_model, tmp_path)
    refused = rocmpanel("--model", str(remote), "--prompt", "hi")
    assert refused.returncode == 2 and "own Python code" in refused.stderr


def test_device_choices_are_the_device_enum_with_cuda_as_an_alias() -> None:
    import argparse

    from rocmpanel.base.enums import Device
    from rocmpanel.chat import cli

    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    for text, device in (("auto", Device.AUTO), ("GPU", Device.GPU), ("cuda", Device.GPU)):
        args = parser.parse_args(["chat", "--model", "m", "--device", text])
        assert Device.parse(args.device) is device
    with pytest.raises(SystemExit):
        parser.parse_args(["chat", "--model", "m", "--device", "tpu"])


def test_a_gpu_asked_for_without_one_is_a_clear_error(tiny_model: Path) -> None:
    done = rocmpanel(
        "--model", str(tiny_model), "--precision", "fp32", "--device", "gpu", "--prompt", "Hi",
    )  # fmt: skip
    assert done.returncode == 1
    assert "No GPU is visible to torch" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_one_shot_reply_is_one_line_on_stdout(tiny_model: Path) -> None:
    common = (
        "--model", str(tiny_model), "--precision", "fp32", "--device", "cpu",
        "--prompt", "Hello", "--max-new-tokens", "6", "--temperature", "0",
    )  # fmt: skip
    as_json = rocmpanel(*common, "--json")
    assert as_json.returncode == 0, as_json.stderr
    text = json.loads(as_json.stdout.strip().splitlines()[-1])["reply"]
    streamed = rocmpanel(*common)  # greedy: the same reply, streamed
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout == (text if text.endswith("\n") else text + "\n")
    figures = streamed.stderr.splitlines()[-1]  # the figures, on their own line
    assert figures.startswith("[") and figures.endswith(" · preset: none]")


def test_the_figures_line_names_the_active_preset(tiny_model: Path) -> None:
    from rocmpanel.base import paths

    folder = paths.config_dir() / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "one-thread.yaml").write_text(
        "id: one-thread\nname: One thread\ntorch:\n  cpu_threads: 1\n", encoding="utf-8"
    )
    used = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "presets", "use", "one-thread"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert used.returncode == 0, used.stderr
    done = rocmpanel(
        "--model", str(tiny_model), "--precision", "fp32", "--device", "cpu",
        "--prompt", "Hello", "--max-new-tokens", "4", "--temperature", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1].endswith(" · preset: One thread]")


def test_a_workload_python_without_torch_names_the_fix(tiny_model: Path, tmp_path: Path) -> None:
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    done = rocmpanel(
        "--model", str(tiny_model), "--precision", "fp32", "--device", "cpu",
        "--prompt", "Hi", "--python", str(python),
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "rocmpanel chat: The model was not loaded. PyTorch is not installed in the workload "
        "Python: rocmpanel torch plan shows the build for this GPU, and rocmpanel torch "
        "install installs it."
    )
    assert "Traceback" not in done.stderr
