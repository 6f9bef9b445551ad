"""Figure 5 of benchmarks/faults.py: the slowest read of a FIFO or an endless file.

Each place is timed in fresh homes of the same kind: with a normal file there, and with the
hazard (a FIFO nobody writes to, or a link to /dev/zero). The figure is the hazard's wall
time minus the normal file's (the faster of two tries each), so process start-up and the
command's own work are subtracted; a command still running after the timeout is killed and
counted at the timeout.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from _faults_common import PY, USER_PROFILE, Home, Ran, link_to, make_fifo, run, write

HANG_TIMEOUT = 10.0

GPU_FILES = {
    "uevent": "DRIVER=amdgpu\nPCI_ID=1002:744C\nPCI_SLOT_NAME=0000:03:00.0\n",
    "gpu_busy_percent": "42\n",
    "mem_busy_percent": "7\n",
    "mem_info_vram_total": "21458059264\n",
    "mem_info_vram_used": "1073741824\n",
    "mem_info_gtt_total": "33554432000\n",
    "mem_info_gtt_used": "52428800\n",
    "current_link_speed": "16.0 GT/s PCIe\n",
    "current_link_width": "16\n",
    "power_dpm_force_performance_level": "auto\n",
    "pp_dpm_sclk": "0: 500Mhz\n1: 1900Mhz *\n2: 2400Mhz\n",
    "pp_dpm_mclk": "0: 96Mhz\n1: 1249Mhz *\n",
    "power/runtime_status": "active\n",
    "hwmon/hwmon3/name": "amdgpu\n",
    "hwmon/hwmon3/temp1_label": "edge\n",
    "hwmon/hwmon3/temp1_input": "60000\n",
    "hwmon/hwmon3/power1_input": "150000000\n",
    "hwmon/hwmon3/power1_cap": "300000000\n",
    "hwmon/hwmon3/fan1_input": "1200\n",
}
KFD_GPU = (
    "cpu_cores_count 0\nsimd_count 192\nvendor_id 4098\ndevice_id 29772\n"
    "location_id 768\ndomain 0\ndrm_render_minor 128\ngfx_target_version 110000\n"
)


def fake_sysfs(root: Path) -> Path:
    """A /sys-like tree with one RX 7900 XTX: drm device, hwmon and KFD topology."""
    device = root / "devices" / "pci0000:00" / "0000:03:00.0"
    for name, text in GPU_FILES.items():
        write(device / name, text)
    link = root / "class" / "drm" / "card0"
    link.mkdir(parents=True, exist_ok=True)
    (link / "device").symlink_to(device, target_is_directory=True)
    nodes = root / "class" / "kfd" / "kfd" / "topology" / "nodes"
    write(nodes / "0" / "properties", "cpu_cores_count 16\nsimd_count 0\n")
    write(nodes / "1" / "properties", KFD_GPU)
    write(nodes / "1" / "gpu_id", "45678\n")
    write(
        nodes / "1" / "mem_banks" / "0" / "properties", "heap_type 1\nsize_in_bytes 25753026560\n"
    )
    return device


def fake_model(folder: Path) -> None:
    """A model folder that passes the chat pre-check (config, tokenizer, a tiny shard)."""
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": 256,
        "max_position_embeddings": 512,
    }
    write(folder / "config.json", json.dumps(config))
    write(
        folder / "tokenizer.json",
        '{"added_tokens": [], "model": {"type": "BPE", "vocab": {}, "merges": []}}',
    )
    write(folder / "tokenizer_config.json", json.dumps({"chat_template": "{{ messages }}"}))
    header = json.dumps({"w": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}})
    write(
        folder / "model.safetensors", struct.pack("<Q", len(header)) + header.encode() + b"\0" * 8
    )


Prepare = Callable[[Home, bool], Sequence[str]]


@dataclass
class Place:
    label: str
    prepare: Prepare  # (home, hazard) -> the command's arguments
    quick: bool = False


def _hazard(path: Path, normal: bytes | str, kind: str) -> Callable[[bool], None]:
    def plant(hazard: bool) -> None:
        if not hazard:
            write(path, normal)
        elif kind == "fifo":
            make_fifo(path)
        else:
            link_to(path, "/dev/zero")

    return plant


def _file_place(
    label: str,
    where: Callable[[Home], Path],
    normal: bytes | str,
    kind: str,
    args: Sequence[str],
    quick: bool = False,
) -> Place:
    def prepare(home: Home, hazard: bool) -> Sequence[str]:
        _hazard(where(home), normal, kind)(hazard)
        return args

    return Place(label, prepare, quick)


def _sysfs_place(label: str, relative: str, kind: str, args: Sequence[str], quick: bool) -> Place:
    def prepare(home: Home, hazard: bool) -> Sequence[str]:
        root = home.root / "sys"
        fake_sysfs(root)
        target = root / relative
        if hazard:
            (make_fifo(target) if kind == "fifo" else link_to(target, "/dev/zero"))
        proc = home.root / "proc"
        proc.mkdir(exist_ok=True)
        return [a.replace("{sys}", str(root)).replace("{proc}", str(proc)) for a in args]

    return Place(label, prepare, quick)


def _arg_place(
    label: str, normal: bytes | str, kind: str, args: Sequence[str], quick: bool
) -> Place:
    def prepare(home: Home, hazard: bool) -> Sequence[str]:
        path = home.root / "input.txt"
        if not hazard:
            write(path, normal)
            target = str(path)
        elif kind == "fifo":
            make_fifo(path)
            target = str(path)
        else:
            target = "/dev/zero"
        return [a.replace("{file}", target) for a in args]

    return Place(label, prepare, quick)


def _model_place(quick: bool) -> Place:
    def prepare(home: Home, hazard: bool) -> Sequence[str]:
        folder = home.root / "model"
        fake_model(folder)
        if hazard:
            make_fifo(folder / "model.safetensors")
        # /bin/false as the workload Python: the command stops right after the pre-check
        # that reads the weights' header, and never loads torch.
        return ["chat", "--model", str(folder), "--python", "/bin/false", "--prompt", "hi"]

    return Place("model.safetensors FIFO (chat --model DIR --python /bin/false)", prepare, quick)


def _dataset_place() -> Place:
    def prepare(home: Home, hazard: bool) -> Sequence[str]:
        folder = home.root / "dataset"
        target = folder / "dataset.yaml"
        if hazard:
            make_fifo(target)
        else:
            write(target, "not: [a valid data set\n")
        return ["data", "update", "--from", str(folder)]

    return Place("dataset.yaml FIFO (data update --from DIR)", prepare)


def _record_place() -> Place:
    def prepare(home: Home, hazard: bool) -> Sequence[str]:
        folder = home.data / "envs" / "env-a"
        record = folder / "rocmpanel-env.json"
        if hazard:
            make_fifo(record)
        else:
            write(record, json.dumps({"name": "env-a", "created_at": 1.0, "installed": {}}))
        return ["torch", "envs"]

    return Place("managed-env record FIFO (torch envs)", prepare)


SETTINGS = f"workload_python: {PY}\ntelemetry_interval_ms: 500\n"
ROCMINFO = "ROCk module is loaded\nAgent 1\n  Name: gfx1100\n  Device Type: GPU\n"


def places() -> list[Place]:
    def settings(h: Home) -> Path:
        return h.config / "settings.yaml"

    def profile(h: Home) -> Path:
        return h.profile

    telemetry = [
        "telemetry",
        "--count",
        "1",
        "--json",
        "--sysfs-root",
        "{sys}",
        "--proc-root",
        "{proc}",
    ]
    doctor_sys = ["doctor", "--json", "--sysfs-root", "{sys}"]
    return [
        _file_place(
            "settings.yaml FIFO (env list)", settings, SETTINGS, "fifo", ["env", "list"], quick=True
        ),
        _file_place(
            "settings.yaml -> /dev/zero (env list)", settings, SETTINGS, "zero", ["env", "list"]
        ),
        _file_place(
            "settings.yaml FIFO (--smoke-test)", settings, SETTINGS, "fifo", ["--smoke-test"]
        ),
        _file_place(
            "~/.profile FIFO (env list)", profile, USER_PROFILE, "fifo", ["env", "list"], quick=True
        ),
        _file_place(
            "~/.profile -> /dev/zero (env list)", profile, USER_PROFILE, "zero", ["env", "list"]
        ),
        _file_place(
            "environment.d file FIFO (env list)", lambda h: h.envd, "A=1\n", "fifo", ["env", "list"]
        ),
        _file_place(
            "env_undo.json FIFO (env undo)",
            lambda h: h.journal,
            '{"version": 1, "entries": []}',
            "fifo",
            ["env", "undo"],
        ),
        _file_place(
            "session_env.json FIFO (env list)",
            lambda h: h.config / "session_env.json",
            '{"variables": {}}',
            "fifo",
            ["env", "list"],
        ),
        _file_place(
            "interpreters.json FIFO (torch envs)",
            lambda h: h.config / "interpreters.json",
            "[]",
            "fifo",
            ["torch", "envs"],
        ),
        _file_place(
            "validation.sqlite3 FIFO (torch history)",
            lambda h: h.data / "validation.sqlite3",
            b"",
            "fifo",
            ["torch", "history"],
        ),
        _sysfs_place(
            "sysfs gpu_busy_percent FIFO (telemetry --sysfs-root)",
            "devices/pci0000:00/0000:03:00.0/gpu_busy_percent",
            "fifo",
            telemetry,
            quick=True,
        ),
        _sysfs_place(
            "sysfs hwmon temp1_input -> /dev/zero (telemetry --sysfs-root)",
            "devices/pci0000:00/0000:03:00.0/hwmon/hwmon3/temp1_input",
            "zero",
            telemetry,
            quick=False,
        ),
        _sysfs_place(
            "KFD node properties FIFO (doctor --sysfs-root)",
            "class/kfd/kfd/topology/nodes/1/properties",
            "fifo",
            doctor_sys,
            quick=False,
        ),
        _sysfs_place(
            "KFD node properties FIFO (telemetry --sysfs-root)",
            "class/kfd/kfd/topology/nodes/1/properties",
            "fifo",
            telemetry,
            quick=False,
        ),
        _arg_place(
            "doctor --from FIFO", ROCMINFO, "fifo", ["doctor", "--from", "{file}"], quick=True
        ),
        _arg_place(
            "doctor --from /dev/zero", ROCMINFO, "zero", ["doctor", "--from", "{file}"], quick=False
        ),
        _arg_place(
            "doctor --rocminfo-file FIFO",
            ROCMINFO,
            "fifo",
            ["doctor", "--rocminfo-file", "{file}"],
            quick=False,
        ),
        _model_place(quick=True),
        _dataset_place(),
        _record_place(),
    ]


@dataclass
class Timed:
    label: str
    normal: Ran
    hazard: Ran

    @property
    def extra(self) -> float:
        """Seconds the hazard added (the timeout when it had to be killed)."""
        if self.hazard.hung:
            return HANG_TIMEOUT
        return max(0.0, self.hazard.wall - self.normal.wall)

    def problem(self) -> str:
        if self.hazard.hung:
            return f"{self.label}: hangs (killed after {HANG_TIMEOUT:.0f} s)"
        if self.hazard.traceback or self.hazard.internal_error:
            return f"{self.label}: exit {self.hazard.rc}, {self.hazard.last_line()}"
        if self.extra >= 1.0:
            return f"{self.label}: took {self.extra:.2f} s longer than on a normal file"
        return ""


def _time_place(parent: Path, place: Place) -> Timed:
    timeout = 40.0 if "--smoke-test" in place.label else HANG_TIMEOUT
    normals = []
    for _ in range(2):
        home = Home.make(parent, "hang-normal")
        write(home.profile, USER_PROFILE)
        normals.append(run(home, place.prepare(home, False), timeout=timeout))
        home.remove()
    hazards: list[Ran] = []
    while len(hazards) < 2 and not any(h.hung for h in hazards):
        home = Home.make(parent, "hang")
        write(home.profile, USER_PROFILE)
        args = place.prepare(home, True)
        hazards.append(run(home, args, timeout=HANG_TIMEOUT + min(n.wall for n in normals)))
        home.remove()
    # the faster of two tries on each side: a busy machine must not pass for a slow read
    # (a hang ends the tries at once and is kept)
    hazard = next((h for h in hazards if h.hung), min(hazards, key=lambda r: r.wall))
    return Timed(place.label, min(normals, key=lambda r: r.wall), hazard)


def hang_reads(parent: Path, quick: bool, workers: int) -> list[Timed]:
    chosen = [p for p in places() if p.quick or not quick]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda place: _time_place(parent, place), chosen))
