"""Launch scripts: the single-node and multi-node commands run for real on CPU (gloo, 2
processes), the Slurm script parses, the DeepSpeed config is ZeRO-3 JSON, hostile paths
survive quoting, and every variable carries an explanation."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import gpu_choice
from rocmpanel.machine.gpu_model import GpuInfo
from rocmpanel.multigpu import launch, launch_env
from rocmpanel.multigpu.launch import LaunchPlan
from rocmpanel.multigpu.launch_env import EnvEntry, LaunchEnv

# A tiny training script: gloo all-reduce of rank + 1, checked against the sum, and one
# file per rank holding what it saw and its arguments (JSON, so any byte survives).
TRAIN = """\
import json, os, sys
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
assert value.item() == world * (world + 1) / 2, value
out = os.environ["LAUNCH_TEST_OUT"]
with open(os.path.join(out, f"rank{rank}.json"), "w") as handle:
    json.dump({"world": world, "sum": value.item(), "args": sys.argv[1:],
               "env": os.environ.get("NCCL_DEBUG")}, handle)
dist.destroy_process_group()
"""
HOSTILE_DIR = "my dir 'quoted' $HOME"
HOSTILE_NAME = "train it's $(echo x) `y`.py"
HOSTILE_ARGS = ("--note", "it's $HOME; rm -rf /", "two\nlines", 'say "hi"', "*")


@pytest.fixture
def train_script(tmp_path: Path) -> Path:
    folder = tmp_path / HOSTILE_DIR
    folder.mkdir()
    script = folder / HOSTILE_NAME
    script.write_text(TRAIN, encoding="utf-8")
    return script


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_script(text: str, tmp_path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "launch.sh"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "LAUNCH_TEST_OUT": str(out), "OMP_NUM_THREADS": "1"}
    env["GLOO_SOCKET_IFNAME"] = "lo"  # gloo on the loopback
    return subprocess.run(
        ["bash", str(path)], env=env, capture_output=True, text=True, timeout=180, check=False
    )


def check_ranks(out: Path, world: int) -> None:
    files = sorted(out.glob("rank*.json"))
    assert [f.name for f in files] == [f"rank{r}.json" for r in range(world)]
    for file in files:
        data = json.loads(file.read_text())
        assert data["world"] == world
        assert data["sum"] == world * (world + 1) / 2
        assert tuple(data["args"]) == HOSTILE_ARGS
        assert data["env"] == "WARN"  # the script's export reached every rank


ENV = LaunchEnv(entries=(EnvEntry("NCCL_DEBUG", "WARN", launch_env.explain("NCCL_DEBUG")),))


def test_single_node_command_runs_for_real(train_script: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "out"
    out.mkdir()
    plan = LaunchPlan(
        str(train_script), HOSTILE_ARGS, nproc_per_node=2, python=sys.executable, env=ENV
    )
    text = launch.render(plan, "torchrun")
    commands = [line for line in text.splitlines() if not line.startswith("#")]
    assert not any("torch.distributed.launch" in line for line in commands)
    done = run_script(text, tmp_path, out)
    assert done.returncode == 0, done.stderr[-3000:]
    check_ranks(out, 2)


def test_multinode_command_runs_for_real_as_one_node(train_script: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "out"
    out.mkdir()
    plan = LaunchPlan(
        str(train_script),
        HOSTILE_ARGS,
        nnodes=1,
        nproc_per_node=2,
        rdzv_host="127.0.0.1",
        rdzv_port=free_port(),
        job_id="test-job",
        max_restarts=0,
        python=sys.executable,
        env=ENV,
    )
    text = launch.render(plan, "multinode")
    assert "--rdzv-backend=c10d" in text and "--rdzv-id=test-job" in text
    done = run_script(text, tmp_path, out)
    assert done.returncode == 0, done.stderr[-3000:]
    check_ranks(out, 2)


def test_every_torchrun_flag_is_one_the_installed_launcher_knows() -> None:
    pytest.importorskip("torch")
    help_text = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    plan = LaunchPlan("/x/train.py", nnodes=2, max_nodes=4)
    flags = launch.torchrun_args(plan, "torchrun") + launch.torchrun_args(plan, "multinode")
    for flag in (f.split("=")[0] for f in flags if f.startswith("--")):
        assert flag in help_text, flag
    assert "--nnodes=2:4" in launch.torchrun_args(plan, "multinode")


def test_hostile_paths_and_arguments_survive_quoting() -> None:
    script = '/tmp/a b/it\'s $HOME `x` "q"\nnew.py'
    plan = LaunchPlan(script, HOSTILE_ARGS, python="/opt/my python/bin/python")
    for kind in ("torchrun", "multinode"):
        last = launch.render(plan, kind, must_exist=False).rstrip("\n")
        command = last[last.index("\nexec ") + 1 :]
        words = shlex.split(command)
        assert words[0] == "exec" and words[1] == "/opt/my python/bin/python"
        assert words[-len(HOSTILE_ARGS) - 1 :] == [script, *HOSTILE_ARGS]


def test_slurm_script_passes_bash_n_and_asks_gpus_only_when_told(tmp_path: Path) -> None:
    plan = LaunchPlan("/x/train.py", HOSTILE_ARGS, nnodes=2, nproc_per_node=8, env=ENV)
    for gres in ("", "gpu:8"):
        text = launch.render(dataclass_replace(plan, gres=gres), "slurm", must_exist=False)
        path = tmp_path / "job.sbatch"
        path.write_text(text)
        checked = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        assert ("#SBATCH --gres=gpu:8" in text) == bool(gres)
        assert "#SBATCH --nodes=2" in text
        assert 'scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1' in text
        assert '--rdzv-endpoint="$head_node:29500"' in text
        assert "srun " in text and "-m torch.distributed.run" in text


def dataclass_replace(plan: LaunchPlan, **changes: object) -> LaunchPlan:
    import dataclasses

    return dataclasses.replace(plan, **changes)  # type: ignore[arg-type]


def test_deepspeed_config_is_zero3_json() -> None:
    text = launch.render(LaunchPlan(""), "deepspeed")
    config = json.loads(text)
    assert config["zero_optimization"]["stage"] == 3
    assert config["bf16"] == {"enabled": True} and config["fp16"] == {"enabled": False}
    assert "train_batch_size" not in config  # DeepSpeed infers it from the GPUs
    offloaded = launch.deepspeed_config(LaunchPlan(""), offload=True, precision="fp16")
    assert offloaded["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert offloaded["fp16"] == {"enabled": True}
    with pytest.raises(PanelError):
        launch.deepspeed_config(LaunchPlan(""), micro_batch=0)


def write_session(variables: dict[str, str]) -> None:
    from rocmpanel.envvars.stores.session import session_file

    path = session_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "variables": variables}))


def test_environment_is_explained_and_keeps_internals_and_secrets_out() -> None:
    write_session({"MIOPEN_FIND_MODE": "FAST", "HF_TOKEN": "hf_secret", "MY_THING": "1"})
    available = (
        GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", bdf="0000:03:00.0"),
        GpuInfo("Radeon RX 7600", gfx="gfx1102", bdf="0000:0a:00.0"),
    )
    choice = gpu_choice.choose(available, ("0000:0a:00.0",), "linux")
    env = launch_env.gather_env(
        environ={"NCCL_IB_HCA": "mlx5_0", "NCCL_SOCKET_IFNAME": "eth0", "PATH": "/bin"},
        active="rdna3-consumer",
        choice=choice,
        platform="linux",
    )
    names = {e.name: e for e in env.entries}
    assert names["ROCR_VISIBLE_DEVICES"].value == "1"
    assert names["ROCR_VISIBLE_DEVICES"].origin == "GPU choice"
    assert names["HIP_VISIBLE_DEVICES"].value is None  # unset: it would count within ROCR's
    assert names["TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"].origin == "preset RDNA3 consumer"
    assert names["NCCL_IB_HCA"].origin == "your environment"
    assert names["MIOPEN_FIND_MODE"].origin == "panel jobs"
    assert "PATH" not in names and "HF_TOKEN" not in names
    assert not any(n.startswith("ROCMPANEL_") for n in names)
    assert any("HF_TOKEN" in note for note in env.left_out)
    assert ("float32_matmul_precision", '"highest"') in env.torch_settings
    text = launch.render(LaunchPlan("/x/t.py", env=env), "torchrun", must_exist=False)
    assert "hf_secret" not in text and "ROCMPANEL_PRESET" not in text
    assert "float32_matmul_precision" in text and "set them in your code" in text
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(("export ", "unset ")):
            name = line.split()[1].split("=")[0]
            comment = lines[index - 1]
            assert comment.startswith(f"# {name}: ") and len(comment) > len(name) + 12, line
    assert "export ROCR_VISIBLE_DEVICES=1" in text and "unset HIP_VISIBLE_DEVICES" in text
    slurm = launch.render(LaunchPlan("/x/t.py", env=env), "slurm", must_exist=False)
    assert "ROCR_VISIBLE_DEVICES" not in slurm.replace("GPU choice is not set", "")
    assert "export NCCL_IB_HCA=mlx5_0" in slurm


def test_explanations_come_from_the_catalogue_and_stay_one_line() -> None:
    from rocmpanel.envvars.catalogue import load_catalogue

    meaning = load_catalogue().lookup("NCCL_SOCKET_IFNAME")
    assert meaning is not None
    assert launch_env.explain("NCCL_SOCKET_IFNAME").split(".")[0] in meaning.meaning
    assert "\n" not in launch_env.explain("X_Y", "line one\nline two. And more.")
    assert launch_env.explain("X_Y", "line one\nline two. And more.") == "line one line two."
    assert "RCCL" in launch_env.explain("NCCL_SOMETHING_NEW")


@pytest.mark.parametrize(
    ("changes", "kind", "words"),
    [
        ({"rdzv_port": 0}, "multinode", "outside 1-65535"),
        ({"rdzv_port": 70000}, "multinode", "outside 1-65535"),
        ({"nnodes": 0}, "multinode", "at least 1"),
        ({"nproc_per_node": 0}, "torchrun", "from 1 to"),
        ({"max_nodes": 1, "nnodes": 2}, "multinode", "below the smallest"),
        ({"rdzv_host": "bad host"}, "multinode", "not a host name"),
        ({"job_id": "a b"}, "slurm", "job id"),
        ({"gres": "gpu:2\n#SBATCH --x"}, "slurm", "GPU request"),
        ({"script": "-x.py"}, "torchrun", "starts with '-'"),
        ({"script": ""}, "torchrun", "Choose the training script"),
    ],
)
def test_validation_says_what_is_wrong(changes: dict[str, object], kind: str, words: str) -> None:
    plan = dataclass_replace(LaunchPlan("/x/train.py"), **changes)
    with pytest.raises(PanelError, match=words):
        launch.render(plan, kind, must_exist=False)


def test_script_must_exist_or_be_a_py_path(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match="does not exist"):
        launch.render(LaunchPlan(str(tmp_path / "nope.py")), "torchrun")
    with pytest.raises(PanelError, match=r"not a \.py file"):
        launch.render(LaunchPlan(str(tmp_path / "nope.sh")), "torchrun", must_exist=False)


def test_endpoint_parsing() -> None:
    assert launch.parse_endpoint("node1:29400") == ("node1", 29400)
    assert launch.parse_endpoint("[::1]:29400") == ("[::1]", 29400)
    for bad in ("node1", ":1", "node1:x", "node1:0", "a b:1"):
        with pytest.raises(PanelError):
            launch.parse_endpoint(bad)


def test_windows_is_refused_with_the_reason() -> None:
    with pytest.raises(PanelError, match="Windows HIP SDK ships none"):
        launch.check_platform("win32")
    launch.check_platform("linux")


def test_save_refuses_to_overwrite_then_backs_up(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    assert launch.save(target, "one\n", "torchrun") is None
    assert os.access(target, os.X_OK)
    with pytest.raises(PanelError, match="--force"):
        launch.save(target, "two\n", "torchrun")
    assert target.read_text() == "one\n"
    backup = launch.save(target, "two\n", "torchrun", force=True)
    assert backup is not None and backup.read_text() == "one\n"
    assert target.read_text() == "two\n"


def test_run_spec_is_torchrun_standalone_and_succeeds_on_exit_zero(train_script: Path) -> None:
    from rocmpanel.jobs.process import decide_outcome

    spec = launch.run_spec(LaunchPlan(str(train_script), ("a",), nproc_per_node=2), None)
    assert spec.launcher == (
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes=1",
        "--nproc-per-node=2",
    )
    assert spec.worker == train_script and spec.args == ("a",)
    outcome = decide_outcome(
        exit_code=0,
        cancelled=False,
        interactive=spec.interactive,
        result=None,
        error=None,
        stderr_tail=(),
        duration_s=1.0,
    )
    assert outcome.was_successful()
    assert launch.outcome_text(outcome).startswith("Finished")
