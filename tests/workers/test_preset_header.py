"""workers/_preset.py: the settings header a worker reads before and after importing torch.

The pure parts run in-process against a fake torch; one test runs the real CPU torch in a
child process with a header set and reads back what torch reports.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"
ALLOC_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
TUNABLE_VARS = (
    "PYTORCH_TUNABLEOP_ENABLED",
    "PYTORCH_TUNABLEOP_TUNING",
    "PYTORCH_TUNABLEOP_FILENAME",
)


@pytest.fixture
def preset(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A fresh _preset module (its state reset), with the variables it sets cleared and
    its log lines collected in ``preset.logged``."""
    for name in (*ALLOC_VARS, *TUNABLE_VARS, "ROCMPANEL_PRESET", "ROCMPANEL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(WORKERS))
    import _preset

    module = importlib.reload(_preset)
    logged: list[tuple[str, str]] = []
    monkeypatch.setattr(module._wire, "log", lambda m, level="info": logged.append((level, m)))
    module.logged = logged  # type: ignore[attr-defined]
    return module


def set_header(monkeypatch: pytest.MonkeyPatch, torch: dict[str, Any]) -> None:
    header = {"id": "mine", "name": "My preset", "torch": torch}
    monkeypatch.setenv("ROCMPANEL_PRESET", json.dumps(header))


@pytest.mark.parametrize(
    ("version", "name"),
    [
        ("2.8.0+rocm6.4", "PYTORCH_CUDA_ALLOC_CONF"),
        ("2.9.1+rocm6.4", "PYTORCH_CUDA_ALLOC_CONF"),  # 2.9's GPU allocator: old names only
        ("2.10.0+rocm7.0", "PYTORCH_ALLOC_CONF"),
        ("2.13.0+cpu", "PYTORCH_ALLOC_CONF"),
        ("3.0.0", "PYTORCH_ALLOC_CONF"),
        (None, "PYTORCH_CUDA_ALLOC_CONF"),  # unknown: the name every release reads
        ("nightly", "PYTORCH_CUDA_ALLOC_CONF"),
    ],
)
def test_the_allocator_variable_follows_the_torch_version(
    preset: ModuleType, version: str | None, name: str
) -> None:
    assert preset.alloc_var(version) == name


def test_allocator_values_are_written_as_torch_parses_them(preset: ModuleType) -> None:
    options = {"expandable_segments": True, "garbage_collection_threshold": 0.6}
    assert preset.alloc_conf(options) == "expandable_segments:True,garbage_collection_threshold:0.6"
    assert preset.alloc_conf({"expandable_segments": False, "max_split_size_mb": 512}) == (
        "expandable_segments:False,max_split_size_mb:512"
    )


def test_without_a_header_nothing_is_set(preset: ModuleType) -> None:
    assert preset.before_torch() is None
    assert preset.after_torch(SimpleNamespace()) == []
    assert preset.summary() is None
    assert preset.report() == {"preset": None, "preset_settings": []}
    assert preset.logged == []
    assert not [name for name in (*ALLOC_VARS, *TUNABLE_VARS) if name in os.environ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            "{not json",
            "The preset header ROCMPANEL_PRESET is not JSON (Expecting property name enclosed "
            "in double quotes: line 1 column 2 (char 1)); running without a preset.",
        ),
        ("[1, 2]", "The preset header ROCMPANEL_PRESET is not a preset; running without one."),
        (
            '{"id": "x", "torch": 3}',
            "The preset header ROCMPANEL_PRESET is not a preset; running without one.",
        ),
    ],
)
def test_a_bad_header_is_logged_and_the_worker_runs_without(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, raw: str, message: str
) -> None:
    monkeypatch.setenv("ROCMPANEL_PRESET", raw)
    assert preset.before_torch() is None
    assert preset.logged == [("warning", message)]
    assert preset.summary() is None and preset.after_torch(SimpleNamespace()) == []


def test_alloc_sets_the_one_variable_the_installed_torch_reads(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preset, "_torch_version", lambda: "2.9.0+rocm6.4")
    set_header(monkeypatch, {"alloc": {"expandable_segments": True}})
    header = preset.before_torch()
    assert header == {
        "id": "mine",
        "name": "My preset",
        "torch": {"alloc": {"expandable_segments": True}},
    }
    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert "PYTORCH_ALLOC_CONF" not in os.environ and "PYTORCH_HIP_ALLOC_CONF" not in os.environ
    assert preset.after_torch(SimpleNamespace()) == [
        {
            "key": "alloc",
            "value": {"expandable_segments": True},
            "applied": True,
            "note": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        }
    ]
    assert preset.summary() == {"id": "mine", "name": "My preset"}


@pytest.mark.parametrize("name", ALLOC_VARS)
def test_the_users_own_allocator_variable_is_kept(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "max_split_size_mb:128")
    set_header(monkeypatch, {"alloc": {"expandable_segments": True}})
    preset.before_torch()
    assert [n for n in ALLOC_VARS if n in os.environ] == [name]
    assert os.environ[name] == "max_split_size_mb:128"
    assert preset.report()["preset_settings"] == [
        {
            "key": "alloc",
            "value": {"expandable_segments": True},
            "applied": False,
            "note": f"kept your {name}=max_split_size_mb:128",
        }
    ]


def test_tunableop_results_go_to_a_file_per_gpu_and_torch_version(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(preset, "_torch_version", lambda: "2.13.0+rocm7.2")
    monkeypatch.setenv("ROCMPANEL_DATA_DIR", str(tmp_path))
    set_header(monkeypatch, {"tunableop": {"enabled": True, "tuning": False}})
    preset.before_torch()
    filename = str(tmp_path / "tunableop" / "tunableop_torch-2.13.0+rocm7.2_gpu%d.csv")
    assert os.environ["PYTORCH_TUNABLEOP_ENABLED"] == "1"
    assert os.environ["PYTORCH_TUNABLEOP_TUNING"] == "0"
    assert os.environ["PYTORCH_TUNABLEOP_FILENAME"] == filename
    assert (tmp_path / "tunableop").is_dir()
    [record] = preset.report()["preset_settings"]
    assert record["applied"] is True
    assert record["note"] == (
        f"PYTORCH_TUNABLEOP_ENABLED=1; PYTORCH_TUNABLEOP_TUNING=0; results in {filename}"
    )


def test_tunableop_without_a_data_dir_leaves_torchs_default_file(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_header(monkeypatch, {"tunableop": {"enabled": True}})
    preset.before_torch()
    assert os.environ["PYTORCH_TUNABLEOP_TUNING"] == "1"  # tuning defaults to on
    assert "PYTORCH_TUNABLEOP_FILENAME" not in os.environ
    [record] = preset.report()["preset_settings"]
    assert record["note"] == (
        "PYTORCH_TUNABLEOP_ENABLED=1; PYTORCH_TUNABLEOP_TUNING=1; "
        "results in torch's default tunableop_results<device index>.csv, in the job's folder"
    )


def test_the_users_own_tunableop_variables_are_kept(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ROCMPANEL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PYTORCH_TUNABLEOP_ENABLED", "0")
    monkeypatch.setenv("PYTORCH_TUNABLEOP_FILENAME", "/mine/results%d.csv")
    set_header(monkeypatch, {"tunableop": {"enabled": True, "tuning": False}})
    preset.before_torch()
    assert os.environ["PYTORCH_TUNABLEOP_ENABLED"] == "0"
    assert os.environ["PYTORCH_TUNABLEOP_TUNING"] == "0"
    assert os.environ["PYTORCH_TUNABLEOP_FILENAME"] == "/mine/results%d.csv"
    assert not (tmp_path / "tunableop").exists()
    [record] = preset.report()["preset_settings"]
    assert record["applied"] is False  # the user turned it off; the preset does not win
    assert record["note"] == (
        "kept your PYTORCH_TUNABLEOP_ENABLED=0; PYTORCH_TUNABLEOP_TUNING=0; "
        "kept your PYTORCH_TUNABLEOP_FILENAME=/mine/results%d.csv"
    )


def test_tunableop_results_folder_that_cannot_be_made(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    monkeypatch.setenv("ROCMPANEL_DATA_DIR", str(blocker))
    set_header(monkeypatch, {"tunableop": {"enabled": True}})
    preset.before_torch()
    assert os.environ["PYTORCH_TUNABLEOP_ENABLED"] == "1"
    assert "PYTORCH_TUNABLEOP_FILENAME" not in os.environ
    [record] = preset.report()["preset_settings"]
    assert record["applied"] is True
    folder = blocker / "tunableop"
    prefix = "PYTORCH_TUNABLEOP_ENABLED=1; PYTORCH_TUNABLEOP_TUNING=1; results not kept: "
    assert record["note"].startswith(f"{prefix}cannot create {folder}: ")  # + the OS's reason


def test_tunableop_off_sets_nothing(preset: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    set_header(monkeypatch, {"tunableop": {"enabled": False}})
    preset.before_torch()
    assert not [name for name in TUNABLE_VARS if name in os.environ]
    [record] = preset.report()["preset_settings"]
    assert record == {
        "key": "tunableop",
        "value": {"enabled": False},
        "applied": True,
        "note": "off (PYTORCH_TUNABLEOP_ENABLED left unset)",
    }


@pytest.mark.parametrize(("mine", "applied"), [("1", False), ("0", True)])
def test_tunableop_off_keeps_the_jobs_own_variable_and_says_so(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, mine: str, applied: bool
) -> None:
    monkeypatch.setenv("PYTORCH_TUNABLEOP_ENABLED", mine)
    set_header(monkeypatch, {"tunableop": {"enabled": False}})
    preset.before_torch()
    assert os.environ["PYTORCH_TUNABLEOP_ENABLED"] == mine
    assert "PYTORCH_TUNABLEOP_TUNING" not in os.environ
    [record] = preset.report()["preset_settings"]
    assert record == {
        "key": "tunableop",
        "value": {"enabled": False},
        "applied": applied,  # "1" keeps TunableOp on: the preset's "off" did not happen
        "note": f"kept your PYTORCH_TUNABLEOP_ENABLED={mine}",
    }


def test_header_hash_is_the_sha256_of_the_raw_header_cut_to_12_digits(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    assert preset.header_hash() is None
    raw = '{"id":"mine","name":"My preset","torch":{"cudnn_benchmark":true}}'
    monkeypatch.setenv("ROCMPANEL_PRESET", raw)
    preset.before_torch()
    assert preset.header_hash() == hashlib.sha256(raw.encode()).hexdigest()[:12]
    assert len(preset.header_hash()) == 12
    monkeypatch.setenv("ROCMPANEL_PRESET", raw.replace("true", "false"))
    preset.before_torch()
    assert preset.header_hash() != hashlib.sha256(raw.encode()).hexdigest()[:12]
    monkeypatch.setenv("ROCMPANEL_PRESET", "not json")
    preset.before_torch()
    assert preset.header_hash() is None  # a header that was not read is no preset


class FakeTorch:
    """The parts of torch after_torch touches, recording each call."""

    def __init__(
        self, gpus: int = 0, fail: str = "", hip: str | None = None, gfx: str = ""
    ) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.version = SimpleNamespace(hip=hip)
        fake = self

        def rec(name: str) -> Any:
            def call(*args: Any) -> None:
                if name == fail:
                    raise RuntimeError(f"{name} is broken")
                fake.calls.append((name, args))

            return call

        self.set_float32_matmul_precision = rec("precision")
        self.set_num_threads = rec("threads")
        self.backends = SimpleNamespace(
            cuda=SimpleNamespace(
                enable_flash_sdp=rec("flash"),
                enable_mem_efficient_sdp=rec("mem_efficient"),
                enable_math_sdp=rec("math"),
            ),
            cudnn=SimpleNamespace(benchmark=False),
        )
        self.cuda = SimpleNamespace(
            is_available=lambda: gpus > 0,
            device_count=lambda: gpus,
            set_per_process_memory_fraction=rec("fraction"),
            get_device_properties=lambda index: SimpleNamespace(gcnArchName=gfx),
        )


def test_after_torch_applies_each_runtime_setting(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_header(
        monkeypatch,
        {
            "float32_matmul_precision": "high",
            "sdpa_backends": ["flash", "math"],
            "memory_fraction": 0.9,
            "cudnn_benchmark": True,
            "cpu_threads": 4,
        },
    )
    preset.before_torch()
    torch = FakeTorch(gpus=2)
    records = preset.after_torch(torch)
    assert torch.calls == [
        ("precision", ("high",)),
        ("flash", (True,)),
        ("mem_efficient", (False,)),
        ("math", (True,)),
        ("fraction", (0.9, 0)),
        ("fraction", (0.9, 1)),
        ("threads", (4,)),
    ]
    assert torch.backends.cudnn.benchmark is True
    assert [(r["key"], r["applied"], r["note"]) for r in records] == [
        ("float32_matmul_precision", True, "torch.set_float32_matmul_precision('high')"),
        ("sdpa_backends", True, "allowed: flash, math"),
        ("memory_fraction", True, "set on 2 GPUs"),
        ("cudnn_benchmark", True, "torch.backends.cudnn.benchmark = True"),
        ("cpu_threads", True, "torch.set_num_threads(4)"),
    ]
    preset.log_applied(records)
    assert preset.logged == [
        (
            "info",
            "Preset My preset: applied float32_matmul_precision, sdpa_backends, "
            "memory_fraction, cudnn_benchmark, cpu_threads.",
        )
    ]


def test_a_failing_setting_is_recorded_and_the_rest_still_apply(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_header(
        monkeypatch,
        {
            "float32_matmul_precision": "medium",
            "memory_fraction": 0.5,
            "sdpa_backends": ["cudnn"],
            "warp_speed": 9,
            "cpu_threads": 2,
        },
    )
    preset.before_torch()
    torch = FakeTorch(gpus=0, fail="precision")
    records = preset.after_torch(torch)
    assert torch.calls == [("threads", (2,))]
    assert [(r["key"], r["applied"], r["note"]) for r in records] == [
        ("float32_matmul_precision", False, "RuntimeError: precision is broken"),
        ("memory_fraction", False, "no effect on CPU"),
        (
            "sdpa_backends",
            False,
            "ValueError: expected a non-empty subset of flash, mem_efficient, math",
        ),
        ("warp_speed", False, "not a setting this worker knows"),
        ("cpu_threads", True, "torch.set_num_threads(2)"),
    ]
    preset.log_applied(records)
    [(level, line)] = preset.logged
    assert level == "warning"
    assert line.startswith("Preset My preset: applied cpu_threads; not applied: ")
    assert "memory_fraction (no effect on CPU)" in line


def test_a_second_after_torch_does_not_repeat_records(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat worker applies the runtime settings again at each model load."""
    monkeypatch.setattr(preset, "_torch_version", lambda: "2.13.0")
    set_header(monkeypatch, {"alloc": {"expandable_segments": True}, "cpu_threads": 3})
    preset.before_torch()
    first = preset.after_torch(FakeTorch())
    assert preset.after_torch(FakeTorch()) == first
    assert [r["key"] for r in preset.report()["preset_settings"]] == ["alloc", "cpu_threads"]


SCRIPT = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
import _wire
_wire.protect_stdout()
import _preset
_preset.before_torch()
import torch
records = _preset.after_torch(torch)
_wire.result({
    "precision": torch.get_float32_matmul_precision(),
    "threads": torch.get_num_threads(),
    "flash": torch.backends.cuda.flash_sdp_enabled(),
    "mem_efficient": torch.backends.cuda.mem_efficient_sdp_enabled(),
    "math": torch.backends.cuda.math_sdp_enabled(),
    "alloc": {n: os.environ.get(n) for n in %r},
    "allocator": torch._C._accelerator_getAllocatorSettings(),
    "summary": _preset.summary(),
    "records": records,
})
"""


@pytest.mark.torch
def test_real_cpu_torch_runs_under_the_header(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this test is about CPU torch (memory_fraction is skipped there)")
    script = tmp_path / "run.py"
    script.write_text(SCRIPT % (ALLOC_VARS,))
    header = {
        "id": "cpu-test",
        "name": "CPU test",
        "torch": {
            "float32_matmul_precision": "medium",
            "cpu_threads": 2,
            "sdpa_backends": ["math"],
            "memory_fraction": 0.5,
            "alloc": {"expandable_segments": True, "garbage_collection_threshold": 0.7},
        },
    }
    env = {k: v for k, v in os.environ.items() if k not in ALLOC_VARS}
    env["ROCMPANEL_PRESET"] = json.dumps(header)
    proc = subprocess.run(
        [sys.executable, str(script), str(WORKERS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    [line] = [json.loads(x) for x in proc.stdout.splitlines() if '"result"' in x]
    data = line["data"]
    assert data["precision"] == "medium"
    assert data["threads"] == 2
    assert (data["flash"], data["mem_efficient"], data["math"]) == (False, False, True)
    conf = "expandable_segments:True,garbage_collection_threshold:0.7"
    # This torch (2.13) reads PYTORCH_ALLOC_CONF; its allocator parsed our value.
    assert data["alloc"] == {
        "PYTORCH_CUDA_ALLOC_CONF": None,
        "PYTORCH_HIP_ALLOC_CONF": None,
        "PYTORCH_ALLOC_CONF": conf,
    }
    assert data["allocator"] == conf
    assert data["summary"] == {"id": "cpu-test", "name": "CPU test"}
    # The allocator variable is set (and parsed), but CPU tensors never use the caching
    # allocator it configures: recorded as no effect, as is the per-GPU memory fraction.
    assert [(r["key"], r["applied"], r["note"]) for r in data["records"]] == [
        ("alloc", False, "no effect on CPU"),
        ("float32_matmul_precision", True, "torch.set_float32_matmul_precision('medium')"),
        ("cpu_threads", True, "torch.set_num_threads(2)"),
        ("sdpa_backends", True, "allowed: math"),
        ("memory_fraction", False, "no effect on CPU"),
    ]


@pytest.mark.parametrize(
    ("gfx", "value", "note"),
    [
        (
            "gfx1100",
            "high",
            "torch.set_float32_matmul_precision('high'), but gfx1100 has no TF32: "
            "float32 matmuls run as before",
        ),
        ("gfx1100", "highest", "torch.set_float32_matmul_precision('highest')"),
        ("gfx942:sramecc+:xnack-", "high", "torch.set_float32_matmul_precision('high')"),
        ("gfx950", "medium", "torch.set_float32_matmul_precision('medium')"),
    ],
)
def test_tf32_on_a_gpu_without_it_is_said_to_change_nothing(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch, gfx: str, value: str, note: str
) -> None:
    set_header(monkeypatch, {"float32_matmul_precision": value})
    preset.before_torch()
    records = preset.after_torch(FakeTorch(gpus=1, hip="7.2.0", gfx=gfx))
    assert [(r["key"], r["applied"], r["note"]) for r in records] == [
        ("float32_matmul_precision", True, note)
    ]


GPU_ONLY_HEADER = {
    "alloc": {"expandable_segments": True},
    "tunableop": {"enabled": True, "tuning": False},
    "cudnn_benchmark": True,
    "memory_fraction": 0.8,
    "cpu_threads": 2,
}


def test_gpu_only_settings_are_recorded_as_no_effect_on_cpu(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """before_torch cannot know there is no GPU; after_torch re-marks its records."""
    monkeypatch.setattr(preset, "_torch_version", lambda: "2.13.0")
    set_header(monkeypatch, GPU_ONLY_HEADER)
    before = preset.before_torch()
    assert before is not None
    torch = FakeTorch(gpus=0)
    records = preset.after_torch(torch)
    assert [(r["key"], r["applied"], r["note"]) for r in records] == [
        ("alloc", False, "no effect on CPU"),
        ("tunableop", False, "no effect on CPU"),
        ("cudnn_benchmark", False, "no effect on CPU"),
        ("memory_fraction", False, "no effect on CPU"),
        ("cpu_threads", True, "torch.set_num_threads(2)"),
    ]
    assert torch.calls == [("threads", (2,))]
    assert torch.backends.cudnn.benchmark is False  # not touched on CPU
    assert preset.report()["preset_settings"] == records


def test_gpu_only_settings_apply_when_torch_sees_a_gpu(
    preset: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preset, "_torch_version", lambda: "2.13.0")
    set_header(monkeypatch, GPU_ONLY_HEADER)
    preset.before_torch()
    records = preset.after_torch(FakeTorch(gpus=1))
    assert [(r["key"], r["applied"]) for r in records] == [
        ("alloc", True),
        ("tunableop", True),
        ("cudnn_benchmark", True),
        ("memory_fraction", True),
        ("cpu_threads", True),
    ]
