"""The generated Slurm batch script, submitted with sbatch to a real one-node Slurm
cluster started here (munged, slurmctld and slurmd in a temporary folder, a CPU-only node:
no --gres line), runs 2 gloo processes through srun + torchrun.

Skips unless Debian's slurm-wlm and munge are installed (``apt-get install slurm-wlm
munge``), the test runs as root (slurmd starts jobs as their user) and torch is there.
Every daemon it starts is stopped at the end."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmpanel.multigpu import launch, launch_env
from rocmpanel.multigpu.launch import LaunchPlan

TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "srun")
TRAIN = """\
import json, os, sys
import torch, torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
with open(os.path.join(sys.argv[1], f"rank{dist.get_rank()}.json"), "w") as handle:
    json.dump({"world": dist.get_world_size(), "sum": value.item(), "args": sys.argv[2:],
               "nccl_debug": os.environ.get("NCCL_DEBUG")}, handle)
dist.destroy_process_group()
"""

pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS) or not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="needs slurm-wlm and munge installed, run as root",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.2)  # daemons, not Qt: polling is the only way to see them ready


SLURM_CONF = """\
ClusterName=rocmpaneltest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=/dev/null
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


@pytest.fixture
def cluster() -> Iterator[dict[str, str]]:
    """A one-node cluster; yields the environment its commands need (SLURM_CONF)."""
    # A short folder: a UNIX socket path must stay under 108 bytes.
    root = Path(tempfile.mkdtemp(prefix="rp-slurm-", dir="/tmp"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        root.chmod(0o755)
        (root / "munge").mkdir(mode=0o755)
        for name in ("state", "spool"):
            (root / name).mkdir()
        key = root / "munge" / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        munge = root / "munge"
        procs.append(subprocess.Popen([
            "munged", "-F", "-f", f"--key-file={key}", f"--socket={munge}/munge.socket",
            f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
            f"--seed-file={munge}/munged.seed",
        ], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        wait_for(lambda: (munge / "munge.socket").exists(), 10, "munged starting")
        host = socket.gethostname()
        conf = root / "slurm.conf"
        conf.write_text(SLURM_CONF.format(
            host=host, root=root, ctld_port=free_port(), d_port=free_port(),
            cpus=os.cpu_count() or 1,
        ))  # fmt: skip
        env = {**os.environ, "SLURM_CONF": str(conf)}
        for argv in (["slurmctld", "-D", "-i"], ["slurmd", "-D", "-N", host]):
            procs.append(
                subprocess.Popen(
                    argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )

        def idle() -> bool:
            done = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True, check=False
            )
            return done.stdout.strip() == "idle"

        wait_for(idle, 60, "the Slurm node becoming idle")
        yield env
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        with contextlib.suppress(OSError):
            shutil.rmtree(root)


def test_generated_batch_script_runs_under_sbatch(cluster: dict[str, str], tmp_path: Path):
    pytest.importorskip("torch")
    folder = tmp_path / "my run 'x'"
    folder.mkdir()
    script = folder / "train $it.py"
    script.write_text(TRAIN)
    env = launch_env.LaunchEnv(
        entries=(launch_env.EnvEntry("NCCL_DEBUG", "WARN", launch_env.explain("NCCL_DEBUG")),)
    )
    plan = LaunchPlan(
        str(script),
        (str(folder), "it's $HOME"),
        nproc_per_node=2,
        rdzv_port=free_port(),
        max_restarts=0,
        python=sys.executable,
        env=env,
        job_id="rp-test",
    )
    text = launch.render(plan, "slurm")
    assert "#SBATCH --gres" not in text  # a CPU-only node: no GPU request
    job = tmp_path / "job.sbatch"
    job.write_text(text)
    output = tmp_path / "job.out"
    done = subprocess.run(
        ["sbatch", "--wait", "-o", str(output), str(job)],
        env={**cluster, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    log = output.read_text() if output.exists() else ""
    assert done.returncode == 0, done.stderr + log
    for rank in (0, 1):
        data = json.loads((folder / f"rank{rank}.json").read_text())
        assert data == {"world": 2, "sum": 3.0, "args": ["it's $HOME"], "nccl_debug": "WARN"}
