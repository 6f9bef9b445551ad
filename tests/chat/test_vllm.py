"""The vLLM-on-ROCm command: exact lines for one and several GPUs, the key only as a
variable reference, GPU support and Windows notes, and the data file's sources."""

from __future__ import annotations

import csv
import shlex
import subprocess
from pathlib import Path

import pytest

from rocmpanel.base.api_key import key_file
from rocmpanel.base.errors import PanelError
from rocmpanel.base.resources import read_resource
from rocmpanel.chat import vllm
from rocmpanel.chat.vllm import VllmFacts, load_facts, parse, vllm_command

MODEL = "/models/Llama-3.2-1B-Instruct"
FLAGS = (
    "--rm --group-add=video --cap-add=SYS_PTRACE --security-opt seccomp=unconfined "
    "--device /dev/kfd --device /dev/dri --ipc=host"
)
SUPPORTED = "gfx90a, gfx942, gfx950, gfx1100, gfx1101, gfx1150, gfx1151, gfx1200, gfx1201"
PRECISION_NOTE = (
    "It serves the folder's own weights in their dtype (usually bf16): about 2 bytes per "
    "parameter, spread over the GPUs, plus the KV cache; vLLM takes 90% of each GPU's "
    "memory by default (--gpu-memory-utilization). rocmpanel's 4-bit and 8-bit "
    "(bitsandbytes) do not carry over: vLLM loads bitsandbytes on ROCm only on Radeon "
    "GPUs, not on Instinct."
)


def key_note() -> str:
    return (
        'Set ROCMPANEL_API_KEY to the API key first (export ROCMPANEL_API_KEY="$(cat '
        f'{key_file()})"): vLLM reads it as VLLM_API_KEY, so the key is neither in this '
        "line nor in the process list. vLLM checks the key only under /v1 and a few other "
        "paths, so other endpoints answer anyone who can reach it."
    )


def test_two_gpus_give_tensor_parallel_two_in_both_forms() -> None:
    c = vllm_command(MODEL, [0, 1], gfx=["gfx1100"], os_name="linux")
    assert c.argv == (
        "vllm",
        "serve",
        MODEL,
        "--served-model-name=Llama-3.2-1B-Instruct",
        "--host",
        "127.0.0.1",
        "--port",
        "8000",
        "--tensor-parallel-size",
        "2",
    )
    assert c.env == (("VLLM_API_KEY", "$ROCMPANEL_API_KEY"), ("HIP_VISIBLE_DEVICES", "0,1"))
    assert c.text == (
        'VLLM_API_KEY="$ROCMPANEL_API_KEY" HIP_VISIBLE_DEVICES=0,1 vllm serve '
        f"{MODEL} --served-model-name=Llama-3.2-1B-Instruct --host 127.0.0.1 --port 8000 "
        "--tensor-parallel-size 2"
    )
    assert c.docker_text == (
        f'VLLM_API_KEY="$ROCMPANEL_API_KEY" docker run {FLAGS} -e VLLM_API_KEY '
        "-e HIP_VISIBLE_DEVICES=0,1 -p 127.0.0.1:8000:8000 "
        f"--mount type=bind,src={MODEL},dst=/models/Llama-3.2-1B-Instruct,readonly "
        "--entrypoint vllm "
        "vllm/vllm-openai-rocm:latest serve /models/Llama-3.2-1B-Instruct "
        "--served-model-name=Llama-3.2-1B-Instruct --host 0.0.0.0 --port 8000 "
        "--tensor-parallel-size 2"
    )
    assert shlex.split(c.docker_text)[1:] == list(c.docker)
    assert c.notes == (
        "vLLM splits the model over 2 GPUs (tensor parallel) and answers many requests at "
        "once; rocmpanel serves on one device, one request at a time.",
        PRECISION_NOTE,
        "vLLM on ROCm supports gfx1100.",
        key_note(),
    )


def test_no_gpus_mean_tensor_parallel_one_and_no_device_list() -> None:
    c = vllm_command(MODEL, [], port=9001, os_name="linux")
    assert c.env == (("VLLM_API_KEY", "$ROCMPANEL_API_KEY"),)
    assert c.argv[-2:] == ("--tensor-parallel-size", "1")
    assert c.text == (
        f'VLLM_API_KEY="$ROCMPANEL_API_KEY" vllm serve {MODEL} --served-model-name='
        "Llama-3.2-1B-Instruct --host 127.0.0.1 --port 9001 --tensor-parallel-size 1"
    )
    assert "HIP_VISIBLE_DEVICES" not in c.docker_text
    assert "-p 127.0.0.1:9001:9001" in c.docker_text
    assert c.notes[0] == (
        "With one GPU this serves on one device, as rocmpanel does, but answers many requests "
        "at once; select more GPUs to split the model over them."
    )
    assert c.notes[2] == f"vLLM on ROCm supports {SUPPORTED}."


def test_the_key_is_never_in_the_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmpanel.base.api_key import load_or_create

    key = load_or_create().value
    monkeypatch.setenv("ROCMPANEL_API_KEY", key)
    c = vllm_command(MODEL, [0, 1, 2, 3], os_name="linux")
    for text in (c.text, c.docker_text, *c.argv, *c.docker, *c.notes):
        assert key not in text
    assert "--api-key" not in c.argv and "--api-key" not in c.docker


def test_the_shell_expands_the_key_reference_and_nothing_else(tmp_path: Path) -> None:
    """Run the line with `echo` in place of vllm: the key arrives in the environment, the
    odd folder name arrives as one argument."""
    folder = tmp_path / "my model's $HOME"
    c = vllm_command(str(folder), [1], os_name="linux")
    line = c.text.replace(
        " vllm serve ", " sh -c 'echo \"$VLLM_API_KEY|$HIP_VISIBLE_DEVICES|$1\"' x ", 1
    )
    out = subprocess.run(
        ["sh", "-c", line],
        env={"ROCMPANEL_API_KEY": "rp-secret-0123456789", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert out == f"rp-secret-0123456789|1|{folder}\n"


def test_unsupported_gpus_are_named() -> None:
    one = vllm_command(MODEL, [0], gfx=["gfx906"], os_name="linux")
    assert one.notes[2] == (
        f"vLLM on ROCm supports {SUPPORTED}; gfx906 is not among them, so it may not run here."
    )
    two = vllm_command(MODEL, [0, 1], gfx=["gfx1030", "gfx906", "gfx1030"], os_name="linux")
    assert two.notes[2] == (
        f"vLLM on ROCm supports {SUPPORTED}; gfx1030, gfx906 are not among them, so it may "
        "not run here."
    )


def test_windows_gets_the_note_that_vllm_does_not_run_there() -> None:
    c = vllm_command(r"C:\models\Qwen2.5-7B", [0], os_name="windows")
    assert c.argv[2:4] == (r"C:\models\Qwen2.5-7B", "--served-model-name=Qwen2.5-7B")
    assert c.notes[-1] == (
        "vLLM does not run on Windows (its documentation points to WSL): run this on a Linux "
        "machine with the GPUs; the line is for a POSIX shell such as bash."
    )
    assert not any("Windows" in n for n in vllm_command(MODEL, [0], os_name="linux").notes)


def test_another_host_is_warned_about_and_published_there_only() -> None:
    c = vllm_command(MODEL, [0], host="192.168.1.20", os_name="linux")
    assert c.argv[4:6] == ("--host", "192.168.1.20")
    assert "-p 192.168.1.20:8000:8000" in c.docker_text
    assert c.notes[-1] == (
        "It listens on 192.168.1.20: anyone who can reach this machine there can use the "
        "endpoints vLLM does not guard, over plain HTTP."
    )
    local = vllm_command(MODEL, [0], host="localhost", os_name="linux")
    assert "-p 127.0.0.1:8000:8000" in local.docker_text  # docker -p takes no host names
    v6 = vllm_command(MODEL, [0], host="::1", os_name="linux")
    assert "-p '[::1]:8000:8000'" in v6.docker_text
    assert v6.notes[-1] == key_note()


def test_a_relative_or_home_folder_becomes_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ann")
    assert vllm_command("~/models/tiny/", [], os_name="linux").argv[2:4] == (
        "/home/ann/models/tiny",
        "--served-model-name=tiny",
    )
    monkeypatch.chdir("/tmp")
    assert vllm_command("tiny", [], os_name="linux").argv[2] == "/tmp/tiny"


def test_the_sources_are_the_data_files_urls() -> None:
    c = vllm_command(MODEL, [0], os_name="linux")
    assert c.sources == (
        "https://docs.vllm.ai/en/latest/getting_started/installation/gpu/",
        "https://github.com/vllm-project/vllm/blob/main/docs/deployment/docker.rocm.inc.md",
        "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/vllm.html",
        "https://docs.vllm.ai/en/latest/cli/serve.html",
        "https://docs.vllm.ai/en/stable/usage/security/",
        "https://github.com/vllm-project/vllm/pull/27307",
        "https://github.com/vllm-project/vllm/issues/27713",
    )


def test_every_source_names_its_url_and_the_date_it_was_checked() -> None:
    import yaml

    data = yaml.safe_load(read_resource("serve.yaml"))
    assert set(data["vllm"]["src"]) == set(data["sources"])
    for entry in data["sources"].values():
        assert entry["url"].startswith("https://")
        assert entry["checked"] == "2026-12-03"
        assert entry["what"]


def test_the_data_file_reads_into_the_facts() -> None:
    facts = load_facts()
    assert isinstance(facts, VllmFacts)
    assert (facts.image, facts.entrypoint, facts.model_mount, facts.windows) == (
        "vllm/vllm-openai-rocm:latest",
        "vllm",
        "/models",
        False,
    )
    assert ", ".join(facts.supported_gfx) == SUPPORTED


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("vllm: [", "serve.yaml is not valid YAML."),
        ("schema: 1\n", "serve.yaml is malformed."),
        ("sources: {}\nvllm: {src: [missing]}\n", "serve.yaml is malformed."),
    ],
)
def test_a_damaged_data_file_is_a_panel_error(text: str, message: str) -> None:
    with pytest.raises(PanelError) as caught:
        parse(text)
    assert caught.value.message == message


def test_the_default_os_is_this_machines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vllm.sys, "platform", "win32")
    assert vllm.this_os() == "windows"
    monkeypatch.setattr(vllm.sys, "platform", "linux")
    assert vllm.this_os() == "linux"
    assert not any("Windows" in n for n in vllm_command(MODEL, [0]).notes)


def test_folder_names_docker_and_vllm_would_misread_arrive_whole(tmp_path: Path) -> None:
    """A colon (docker -v splits there), a comma (--mount's separator) and a leading dash
    (an option to vLLM's parser) in the folder's name."""
    for name in ("a:b", "x,y", "-rf"):
        c = vllm_command(str(tmp_path / name), [0], os_name="linux")
        words = shlex.split(c.docker_text)
        mount = words[words.index("--mount") + 1]
        fields = next(csv.reader([mount]))
        assert fields == [
            "type=bind",
            f"src={tmp_path / name}",
            f"dst=/models/{name.replace(':', '_').replace(',', '_')}",
            "readonly",
        ]
        assert f"--served-model-name={name}" in c.argv
        assert f"--served-model-name={name}" in words
