"""``rocmpanel chat`` says where a spread model went, from a worker's recorded result.

No machine here has two GPUs: a stand-in workload Python answers the load with the
``loaded`` result a spread load sends (the shape of ``_chat_engine.LoadReport``) and the
prompt with one reply; the CLI is the real one, run in-process.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from rocmpanel.shell.cli import main

GIB = 1024**3
LOADED = {
    "kind": "loaded",
    "precision": "nf4",
    "device": "gpu",
    "device_name": "2 × AMD Radeon RX 7900 XTX",
    "bdf": "0000:03:00.0",
    "parameters": 70_000_000_000,
    "context_length": 4096,
    "load_s": 41.2,
    "memory_bytes": int(19.8 * GIB),
    "memory_kind": "vram",
    "gpus": [
        {"index": 0, "name": "AMD Radeon RX 7900 XTX", "bdf": "0000:03:00.0",
         "bytes": int(9.1 * GIB), "layers": [[0, 15]]},
        {"index": 1, "name": "AMD Radeon RX 7900 XTX", "bdf": "0000:04:00.0",
         "bytes": int(8.7 * GIB), "layers": [[16, 31]]},
    ],
    "split": "layers 0-15 on GPU 0, 16-31 on GPU 1",
}  # fmt: skip

FAKE_WORKER = """
import json, sys
LOADED = json.loads({loaded!r})
def say(**event):
    sys.stdout.write(json.dumps(event) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd.get("op") == "load":
        LOADED["path"] = cmd["path"]
        say(event="result", data=LOADED)
    elif cmd.get("op") == "generate":
        say(event="token", text="Hi", id=cmd.get("id"), n=1)
        say(event="reply", id=cmd.get("id"), text="Hi", prompt_tokens=3, new_tokens=1,
            ttft_s=0.1, tokens_per_s=None, total_s=0.1, peak_memory_bytes=1,
            memory_kind="vram", device="gpu", precision="nf4", stopped=False, finish="eos")
    elif cmd.get("op") == "exit":
        break
"""


@pytest.fixture
def spread_python(tmp_path: Path) -> str:
    """A 'workload Python' that runs the stand-in worker whatever it is asked to run."""
    if sys.platform == "win32":
        pytest.skip("the stand-in interpreter is a shell script")
    worker = tmp_path / "fake_worker.py"
    worker.write_text(FAKE_WORKER.format(loaded=json.dumps(LOADED)), encoding="utf-8")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{worker}"\n', encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return str(python)


def test_the_load_line_names_each_gpu_and_its_layers(
    spread_python: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    (folder / "model.safetensors").write_bytes(
        len(header).to_bytes(8, "little") + header + bytes(16)
    )
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    tokenizer = {"added_tokens": [], "model": {"type": "BPE", "vocab": {}, "merges": []}}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "{{ messages }}"}), encoding="utf-8"
    )
    code = main(
        ["chat", "--model", str(folder), "--prompt", "hi", "--device", "gpu",
         "--precision", "nf4", "--python", spread_python]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip() == "Hi"
    load_line = next(line for line in err.splitlines() if line.startswith("Loaded "))
    assert load_line == (
        f"Loaded {folder} (nf4 on 2 × AMD Radeon RX 7900 XTX) in 41.2 s. "
        "Spread over GPU 0 and GPU 1 (layers 0-15 / 16-31), 9.1 + 8.7 GiB."
    )
