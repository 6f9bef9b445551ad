"""``rocmpanel serve`` before any model loads: argument refusals (exit 2, one sentence), the
key, the port, missing server packages, --vllm, and the line printed per request."""

from __future__ import annotations

import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from rocmpanel.base.api_key import key_file, load_or_create
from rocmpanel.chat import serve_cli
from rocmpanel.chat.serve_protocol import Served
from rocmpanel.chat.vllm import command_lines, vllm_command
from rocmpanel.shell.cli import main

USAGE_END = "rocmpanel serve: error: "


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The last stderr line of an argument the parser refuses (exit status 2)."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", *args])
    assert exited.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", " "],
            "argument --model: the model folder is empty; give the folder that holds "
            "config.json and the weights, such as --model ~/models/Llama-3.2-1B-Instruct",
        ),
        (
            ["--model", "m", "--api-key", "0123456789abcde"],
            "argument --api-key: this API key cannot be used: it has 15 characters; a key "
            "needs at least 16",
        ),
        (
            ["--model", "m", "--api-key", "0123456789 abcdef"],
            "argument --api-key: this API key cannot be used: it holds spaces or characters "
            "other than printable ASCII",
        ),
        (["--model", "m", "--port", "65536"], "argument --port: 65536 is above the maximum 65535"),
        (["--model", "m", "--port", "-1"], "argument --port: -1 is below the minimum 0"),
        (
            ["--model", "m", "--max-queue", "1025"],
            "argument --max-queue: 1025 is above the maximum 1024",
        ),
        (["--model", "m", "--max-queue", "0"], "argument --max-queue: 0 is below the minimum 1"),
        (["--model", "m", "--timeout", "0"], "argument --timeout: 0 is below the minimum 1"),
        (
            ["--model", "m", "--host", "http://0.0.0.0"],
            "argument --host: 'http://0.0.0.0' is not an address to listen on; give one such "
            "as 127.0.0.1 or ::1",
        ),
        (
            ["--model", "m", "--cors-origin", "*"],
            "argument --cors-origin: '*' is not an origin; give scheme, host and port only, "
            "such as http://localhost:3000 (one --cors-origin per origin, no wildcard)",
        ),
        (
            ["--model", "m", "--cors-origin", "http://localhost:3000/app"],
            "argument --cors-origin: 'http://localhost:3000/app' is not an origin; give "
            "scheme, host and port only, such as http://localhost:3000 (one --cors-origin per "
            "origin, no wildcard)",
        ),
    ],
)
def test_bad_arguments_are_refused_with_one_sentence(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert refused(capsys, *args) == USAGE_END + message


def test_good_arguments_parse() -> None:
    from rocmpanel.shell.cli import build_parser

    args = build_parser().parse_args(
        ["serve", "--model", "m", "--port", "0", "--cors-origin", "http://localhost:3000/",
         "--cors-origin", "https://app.example", "--max-queue", "1", "--api-key",
         " 0123456789abcdef "]
    )  # fmt: skip
    assert (args.port, args.cors_origin, args.max_queue, args.api_key, args.host) == (
        0,
        ["http://localhost:3000", "https://app.example"],
        1,
        "0123456789abcdef",
        "127.0.0.1",
    )
    assert (args.timeout, args.vllm, args.show_key, args.new_key) == (300.0, False, False, False)


def test_a_model_path_that_is_not_a_folder_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["serve", "--model", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == (
        f"rocmpanel serve: there is no model folder at {tmp_path / 'nothing'}: the path does "
        "not exist.\n"
    )
    assert not key_file().exists()  # refused before a key is made


def test_a_port_in_use_is_refused_before_anything_loads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--model", str(tmp_path), "--port", str(port)]) == 1
    assert capsys.readouterr().err == (
        f"rocmpanel serve: port {port} on 127.0.0.1 is already in use by another program: "
        "choose another with --port (--port 0 picks a free one).\n"
    )


def test_a_bad_key_in_the_environment_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROCMPANEL_API_KEY", "short")
    assert main(["serve", "--model", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        "rocmpanel serve: ROCMPANEL_API_KEY cannot be used as the API key: it has 5 "
        "characters; a key needs at least 16.\n"
    )


def test_the_key_comes_from_the_option_the_environment_or_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def args(**changes: object) -> SimpleNamespace:
        return SimpleNamespace(**{"api_key": None, "new_key": False, **changes})

    assert serve_cli._the_key(args(api_key="k" * 16)) == ("k" * 16, "given with --api-key")
    monkeypatch.setenv("ROCMPANEL_API_KEY", "e" * 20)
    assert serve_cli._the_key(args()) == ("e" * 20, "from ROCMPANEL_API_KEY")
    monkeypatch.delenv("ROCMPANEL_API_KEY")
    value, source = serve_cli._the_key(args())
    assert (value, source) == (key_file().read_text().strip(), f"new, stored in {key_file()}")
    assert serve_cli._the_key(args()) == (value, f"stored in {key_file()}")
    newer, source = serve_cli._the_key(args(new_key=True))
    assert newer != value and source == f"new, stored in {key_file()}"
    assert load_or_create().value == newer


def test_missing_server_packages_are_said_with_the_fix(
    capsys: pytest.CaptureFixture[str], tiny_model: Path, python_without_torch: str
) -> None:
    code = main(
        ["serve", "--model", str(tiny_model), "--device", "cpu", "--precision", "fp32",
         "--port", "0", "--python", python_without_torch]
    )  # fmt: skip
    assert code == 1
    py = python_without_torch
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rocmpanel serve: the workload Python ({py}) cannot serve yet. PyTorch is not "
        "installed in the workload Python: rocmpanel torch plan shows the build for this "
        "GPU, and rocmpanel torch install installs it. It also lacks transformers, "
        "accelerate, safetensors, tokenizers, fastapi, uvicorn. Install them: "
        f"{py} -m pip install -U transformers accelerate safetensors tokenizers fastapi "
        "uvicorn."
    )  # everything at once: the chat's packages and the server's


def test_another_host_is_warned_about(
    capsys: pytest.CaptureFixture[str], tiny_model: Path, tmp_path: Path
) -> None:
    """The warning comes before anything starts (here the worker cannot: no such Python)."""
    code = main(
        ["serve", "--model", str(tiny_model), "--device", "cpu", "--precision", "fp32",
         "--host", "0.0.0.0", "--port", "0", "--python", str(tmp_path / "no-python")]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "rocmpanel serve: warning: listening on 0.0.0.0: anyone who can reach this machine "
        "there and has the key can use the model, and requests travel as plain HTTP (no "
        "TLS): use it only on a network you trust."
    )
    assert err[-1].startswith("rocmpanel serve: ")


def test_vllm_prints_the_command_and_loads_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kfd
) -> None:
    # Two cards with the integrated GPU between them in the runtime's order: the default
    # choice leaves it out, and the second card keeps its own number (2, not 1).
    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RAPHAEL_IGPU, kfd.RX7900XTX_2)
    monkeypatch.setenv("ROCMPANEL_SYSFS_ROOT", str(root))
    model = tmp_path / "Qwen2.5-7B-Instruct"
    model.mkdir()
    assert main(["serve", "--model", str(model), "--vllm", "--port", "9000"]) == 0
    expected = vllm_command(str(model), [0, 2], port=9000, gfx=["gfx1100"] * 2, os_name="linux")
    out = capsys.readouterr().out
    assert out == "\n".join(command_lines(expected)) + "\n"
    assert "HIP_VISIBLE_DEVICES=0,2 " in out and "--tensor-parallel-size 2" in out
    assert not key_file().exists()  # no key was needed


def test_a_served_line_says_it_all() -> None:
    base = {
        "at": 0.0, "method": "POST", "path": "/v1/chat/completions", "status": 200,
        "stream": True, "prompt_tokens": 12, "completion_tokens": 40, "latency_s": 0.854,
        "ttft_s": 0.03, "tokens_per_s": 50.04, "finish_reason": "stop", "client": "127.0.0.1",
        "error": None, "disconnected": False,
    }  # fmt: skip
    line = serve_cli.served_line(Served.from_result(base))
    assert line[8:] == " POST /v1/chat/completions 200 12+40 tokens 0.85 s 50.0 tok/s"
    refused_line = serve_cli.served_line(
        Served.from_result(
            {
                **base,
                "status": 401,
                "latency_s": None,
                "tokens_per_s": None,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "error": "Incorrect API key.",
            }
        )
    )
    assert refused_line[8:] == " POST /v1/chat/completions 401 0+0 tokens - (Incorrect API key.)"
    gone = serve_cli.served_line(Served.from_result({**base, "status": 499, "disconnected": True}))
    assert gone.endswith(" 499 12+40 tokens 0.85 s 50.0 tok/s (client went away)")
