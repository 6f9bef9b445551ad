"""``rocmpanel chat``'s declarations and argument checks (no worker, no torch)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from rocmpanel.base.enums import Device
from rocmpanel.base.settings import ChatSettings, option_of
from rocmpanel.chat import cli
from rocmpanel.shell.cli import build_parser, main

# The smallest tokenizer.json transformers reads: an added_tokens list and a model.
TOKENIZER_JSON = '{"added_tokens": [], "model": {"type": "BPE", "vocab": {}, "merges": []}}'


def test_device_choices_are_every_device_and_the_cuda_alias() -> None:
    assert {d.value for d in Device} | {"cuda"} == set(cli.DEVICE_CHOICES)
    assert len(cli.DEVICE_CHOICES) == len(set(cli.DEVICE_CHOICES))
    assert {Device.parse(choice) for choice in cli.DEVICE_CHOICES} == set(Device)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (["--context", "-1"], "argument --context: -1 is below the minimum 256"),
        (["--context", "4k"], "argument --context: '4k' is not a whole number"),
        (["--temperature", "nan"], "argument --temperature: 'nan' is not a finite number"),
        (["--temperature", "inf"], "argument --temperature: 'inf' is not a finite number"),
        (["--temperature", "5.5"], "argument --temperature: 5.5 is above the maximum 5"),
        (["--top-p", "1.01"], "argument --top-p: 1.01 is above the maximum 1"),
        (["--top-p", "-0.1"], "argument --top-p: -0.1 is below the minimum 0"),
        (["--top-p", "high"], "argument --top-p: 'high' is not a number"),
        (["--max-new-tokens", "0"], "argument --max-new-tokens: 0 is below the minimum 1"),
        (["--max-new-tokens", "1e3"], "argument --max-new-tokens: '1e3' is not a whole number"),
        (["--seed", "-2"], "argument --seed: -2 is below the minimum -1"),
        (["--prompt", "  "], "argument --prompt: the prompt is empty; give the text to answer"),
    ],
)
def test_number_options_are_held_to_the_declared_ranges(
    bad: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["chat", "--model", "/nowhere", *bad])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"rocmpanel chat: error: {message}"
    assert "Traceback" not in err


def test_the_largest_declared_values_are_accepted() -> None:
    upper = option_of(ChatSettings, "max_new_tokens").maximum
    args = build_parser().parse_args(
        ["chat", "--model", "/nowhere", "--max-new-tokens", str(int(upper or 0)), "--seed", "-1",
         "--top-p", "1", "--temperature", "0"]
    )  # fmt: skip
    assert (args.max_new_tokens, args.seed, args.top_p, args.temperature) == (upper, -1, 1.0, 0.0)


@pytest.mark.parametrize("model", ["", "   "])
def test_an_empty_model_is_refused_before_the_current_folder_is_looked_at(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["chat", "--model", model])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "rocmpanel chat: error: argument --model: the model folder is empty; give the folder "
        "that holds config.json and the weights, such as --model ~/models/Llama-3.2-1B-Instruct"
    )


def test_model_path_problems_are_named_without_opening_anything(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    file = tmp_path / "model.safetensors"
    file.write_bytes(b"x")
    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        assert cli.model_path_problem(str(sock_path)) == (
            f"{sock_path} is a socket, not a model folder; give the folder that holds "
            "config.json and the weights."
        )
    assert cli.model_path_problem(str(tmp_path)) is None
    assert cli.model_path_problem(str(tmp_path / "none")) == (
        f"there is no model folder at {tmp_path / 'none'}: the path does not exist."
    )
    assert cli.model_path_problem(str(fifo)) == (
        f"{fifo} is a FIFO (named pipe), not a model folder; give the folder that holds "
        "config.json and the weights."
    )
    assert cli.model_path_problem("/dev/null") == (
        "/dev/null is a device, not a model folder; give the folder that holds config.json "
        "and the weights."
    )
    assert cli.model_path_problem(str(file)) == (
        f"{file} is a file, not a model folder; give the folder that holds config.json and "
        "the weights."
    )


@pytest.mark.parametrize("kind", ["missing", "fifo"])
def test_a_bad_model_path_exits_2_with_one_sentence(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    assert main(["chat", "--model", str(path), "--prompt", "hi"]) == 2
    expected = {
        "missing": f"there is no model folder at {path}: the path does not exist.",
        "fifo": f"{path} is a FIFO (named pipe), not a model folder; give the folder that "
        "holds config.json and the weights.",
    }[kind]
    assert capsys.readouterr().err == f"rocmpanel chat: {expected}\n"


def test_a_missing_workload_python_exits_2(
    tiny_model_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["chat", "--model", str(tiny_model_folder), "--prompt", "hi", "--device", "cpu",
         "--precision", "fp32", "--python", "/nonexistent/python"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines()[-1] == (
        "rocmpanel chat: The workload Python '/nonexistent/python' does not exist."
    )


@pytest.fixture
def tiny_model_folder(tmp_path: Path) -> Path:
    """A folder that passes the model check (config, a safetensors header, a tokenizer);
    nothing loads it: the test stops before a worker starts."""
    import json
    import struct

    folder = tmp_path / "model"
    folder.mkdir()
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "num_hidden_layers": 2,
        "vocab_size": 128,
        "max_position_embeddings": 512,
        "torch_dtype": "float32",
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    (folder / "tokenizer.json").write_text(TOKENIZER_JSON, encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "{{ messages }}"}), encoding="utf-8"
    )
    return folder


def test_the_chat_parser_has_a_description(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["chat", "--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert cli.DESCRIPTION in out
    assert cli.DESCRIPTION.startswith("Load a local Hugging Face model folder")


def test_json_failures_say_when_they_happened(
    tiny_model_folder: Path, python_without_torch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --json a failure is one object on standard output: the worker did not start
    ("start"), or it failed while loading ("load")."""
    import json

    argv = ["chat", "--model", str(tiny_model_folder), "--prompt", "hi", "--json"]
    argv += ["--device", "cpu", "--precision", "fp32"]
    assert main([*argv, "--python", "/nonexistent/python"]) == 2
    out, err = capsys.readouterr()
    assert (json.loads(out), err) == (
        {
            "ok": False,
            "kind": "start",
            "error": "The workload Python '/nonexistent/python' does not exist.",
        },
        "",
    )
    assert main([*argv, "--python", python_without_torch]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == {
        "ok": False,
        "kind": "load",
        "error": "The model was not loaded. PyTorch is not installed in the workload Python: "
        "rocmpanel torch plan shows the build for this GPU, and rocmpanel torch install "
        "installs it.",
    }
