"""``rocmpanel presets`` and ``rocmpanel bench``: list, show, validate (good and broken
files), export, refusals, and a real A/B run on CPU torch (none against a one-thread
preset) through the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from rocmpanel.base import paths
from rocmpanel.jobs.presets import HEADER_VAR, Target, builtin_presets
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.spec import PreparedJob
from rocmpanel.shell.cli import main
from rocmpanel.tuning.bench import load_results

ONE_THREAD = "id: one-thread\nname: One thread\ntorch:\n  cpu_threads: 1\n"
BROKEN = "id: bad\nname: Bad\ntorch:\n  cpu_threads: 0\n"


def user_preset(text: str = ONE_THREAD, ident: str = "one-thread") -> Path:
    folder = paths.config_dir() / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{ident}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_builtins_then_user_presets(capsys: pytest.CaptureFixture[str]) -> None:
    user_preset()
    code, out, err = run(capsys, "presets", "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    ids = [line.split()[0] for line in lines]
    assert ids == [p.id for p in builtin_presets()] + ["one-thread"]
    assert lines[-1] == "one-thread      One thread (user; any; 1 item)"


def test_list_json_and_an_unreadable_user_file(capsys: pytest.CaptureFixture[str]) -> None:
    user_preset()
    broken = user_preset(BROKEN, "bad")
    code, out, err = run(capsys, "presets", "list", "--json")
    assert code == 0
    data = json.loads(out)
    mine = data[-1]
    assert mine == {
        "id": "one-thread",
        "name": "One thread",
        "description": "",
        "archs": ["any"],
        "builtin": False,
        "path": str(paths.config_dir() / "presets" / "one-thread.yaml"),
        "items": [
            {
                "kind": "torch",
                "key": "cpu_threads",
                "value": 1,
                "why": "",
                "source": "",
                "platforms": ["linux", "windows"],
            }
        ],
    }
    assert "bad" not in [p["id"] for p in data]
    assert err.startswith(f"rocmpanel presets: skipped {broken}: ")
    assert broken.read_text(encoding="utf-8") == BROKEN  # never overwritten


def test_show_prints_each_item_with_why_source_and_effect(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.tuning import cli

    monkeypatch.setattr(cli, "this_target", lambda: Target(platform="linux", gfx=None))
    code, out, err = run(capsys, "presets", "show", "Debugging")
    assert code == 0 and err == ""
    preset = next(p for p in builtin_presets() if p.id == "debugging")
    assert out.splitlines()[0] == "Debugging (debugging; built-in)"
    assert "Items (on this machine: linux, GPU not detected):" in out
    for item in preset.items():
        assert f"  {item.kind} {item.key} = {item.value}  [applies" in out
        assert f"      {item.why}\n      source: {item.source}\n" in out


def test_show_json_marks_what_has_no_effect_on_the_gpu(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.jobs.presets import item_effects
    from rocmpanel.tuning import cli

    target = Target(platform="linux", gfx="gfx1100")
    monkeypatch.setattr(cli, "this_target", lambda: target)
    code, out, _ = run(capsys, "presets", "show", "cdna3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["target"] == {"platform": "linux", "gfx": "gfx1100"}
    preset = next(p for p in builtin_presets() if p.id == "cdna3")
    expected = [(e.applies, e.note) for e in item_effects(preset, target)]
    assert [(i["applies"], i["note"]) for i in data["items"]] == expected
    assert not all(applies for applies, _ in expected)  # an MI300 preset on an RDNA3 card


def test_show_an_unknown_preset_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "presets", "show", "nope")
    known = ", ".join(p.id for p in builtin_presets())
    assert (code, out) == (2, "")
    assert err == f"rocmpanel presets: unknown preset 'nope'. Known: {known}.\n"


def test_validate_good_broken_and_missing_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good, bad, missing = tmp_path / "good.yaml", tmp_path / "bad.yaml", tmp_path / "no.yaml"
    good.write_text(ONE_THREAD, encoding="utf-8")
    bad.write_text(BROKEN, encoding="utf-8")
    code, out, _ = run(capsys, "presets", "validate", str(good), str(bad), str(missing))
    assert code == 1
    assert out.splitlines() == [
        f"{good}: ok (one-thread, 1 item)",
        f"{bad}:4: torch.cpu_threads: must be from 1 to 4096; got 0",
        f"{missing}: cannot read: No such file or directory",
    ]


def test_validate_only_good_files_exits_0_and_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(ONE_THREAD, encoding="utf-8")
    code, out, _ = run(capsys, "presets", "validate", str(good), "--json")
    assert code == 0
    assert json.loads(out) == [{"file": str(good), "ok": True, "id": "one-thread", "items": 1}]


def test_export_writes_a_file_that_validates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_file = tmp_path / "exported.yaml"
    code, out, _ = run(capsys, "presets", "export", "rdna3-consumer", "--out", str(out_file))
    assert code == 0
    assert out == f"Wrote RDNA3 consumer (rdna3-consumer) to {out_file}.\n"
    code, out, _ = run(capsys, "presets", "validate", str(out_file))
    assert code == 0 and out == f"{out_file}: ok (rdna3-consumer, 2 items)\n"


def test_bench_unknown_preset_lists_the_known_ones_with_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "bench", "--a", "none", "--b", "nope", "--workload", "gemm")
    known = ", ".join(["none", *(p.id for p in builtin_presets())])
    assert (code, out) == (2, "")
    assert err == f"rocmpanel bench: unknown preset 'nope'. Known: {known}.\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--reps", "1"], "argument --reps: 1 is below the minimum 2"),
        (["--reps", "51"], "argument --reps: 51 is above the maximum 50"),
        (["--workload", "fft"], "argument --workload: invalid choice: 'fft'"),
        (["--device", "gpu"], "argument --device: invalid choice: 'gpu'"),
    ],
)
def test_bench_wrong_arguments_are_argparse_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    base = {"--a": "none", "--b": "none", "--workload": "gemm"}
    given = dict(zip(argv[::2], argv[1::2], strict=True))
    args = [x for pair in {**base, **given}.items() for x in pair]
    with pytest.raises(SystemExit) as caught:
        main(["bench", *args])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


def test_bench_chat_without_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "bench", "--a", "none", "--b", "none", "--workload", "chat")
    assert code == 2
    assert err == "rocmpanel bench: The chat workload needs a model folder.\n"


@pytest.mark.torch
@pytest.mark.slow
def test_a_real_ab_run_on_cpu_torch(capsys: pytest.CaptureFixture[str]) -> None:
    """none against a one-thread preset, GEMM quick, 2 runs each, in real workers."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this test is about a CPU torch")
    user_preset()
    code, out, err = run(
        capsys,
        "bench", "--a", "none", "--b", "one-thread", "--workload", "gemm",
        "--reps", "2", "--quick", "--device", "cpu", "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["saved"] is True and data["errors"] == [] and data["cancelled"] is False
    assert (data["a_name"], data["b_name"]) == ("none", "One thread")
    assert data["device_label"] == "CPU" and data["torch_version"] == torch.__version__
    assert data["plan"] == {
        "a": "none",
        "b": "one-thread",
        "workload": "gemm",
        "reps": 2,
        "python": "",
        "device": "cpu",
        "model": "",
        "quick": True,
    }
    # Each side ran under its own preset, as its worker reported it.
    runs = [(r["side"], r["run"], r["preset"], r["threads"]) for r in data["runs"]]
    one = {"id": "one-thread", "name": "One thread"}
    assert [r[:3] for r in runs] == [("A", 1, None), ("B", 1, one), ("A", 2, None), ("B", 2, one)]
    assert {r[3] for r in runs if r[0] == "B"} == {1}
    b_settings = [r["preset_settings"] for r in data["runs"] if r["side"] == "B"]
    assert all(s == [b_settings[0][0]] and s[0]["applied"] is True for s in b_settings)
    cases = {c["case"]: c for c in data["cases"]}
    assert sorted(cases) == ["gemm 128 bf16", "gemm 128 fp32", "gemm 256 bf16", "gemm 256 fp32"]
    for case in cases.values():
        assert case["unit"] == "TFLOP/s" and len(case["a"]) == len(case["b"]) == 2
        assert case["ratio_low"] <= case["ratio"] <= case["ratio_high"]
        assert case["verdict"] == "no measurable difference" or case["verdict"].startswith(
            ("A faster by ", "B faster by ")
        )
    [saved] = load_results()
    assert saved.id == data["id"] and saved.to_json() == {
        k: v for k, v in data.items() if k != "saved"
    }
    assert err.count("A/B benchmark (gemm): ") == 4
    print(json.dumps({c: (v["a_median"], v["b_median"]) for c, v in cases.items()}))


class FakeJob:
    """Stands in for JobProcess: each wait() gives the next scripted outcome, or raises
    KeyboardInterrupt (Ctrl+C) where the script says so."""

    script: ClassVar[list[object]] = []
    started: ClassVar[list[PreparedJob]] = []
    cancels: ClassVar[int] = 0

    def __init__(self, prepared: PreparedJob, on_event: object, on_done: object) -> None:
        self.prepared = prepared
        self.cancelled = False

    def start(self) -> None:
        FakeJob.started.append(self.prepared)

    def wait(self, timeout: float | None = None) -> JobOutcome | None:
        if self.cancelled:
            return JobOutcome(JobState.CANCELLED, None, "cancelled")
        item = FakeJob.script.pop(0)
        if item is KeyboardInterrupt:
            raise KeyboardInterrupt
        assert isinstance(item, JobOutcome)
        return item

    def cancel(self) -> None:
        self.cancelled = True
        FakeJob.cancels += 1


def ok(preset: dict[str, str] | None, value: float) -> JobOutcome:
    data = {
        "cases": [{"case": "g", "unit": "TFLOP/s", "higher_is_better": True, "value": value}],
        "device": "cpu",
        "device_label": "CPU",
        "torch_version": "2.13.0+cpu",
        "preset": preset,
        "preset_settings": [],
    }
    return JobOutcome(JobState.SUCCEEDED, 0, "done", result=data)


@pytest.fixture
def fake_jobs(monkeypatch: pytest.MonkeyPatch) -> type[FakeJob]:
    from rocmpanel.jobs import process

    FakeJob.script, FakeJob.started, FakeJob.cancels = [], [], 0
    monkeypatch.setattr(process, "JobProcess", FakeJob)
    return FakeJob


ONE = {"id": "one-thread", "name": "One thread"}


def test_ctrl_c_kills_the_worker_keeps_what_was_measured_and_says_so(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob]
) -> None:
    user_preset()
    fake_jobs.script = [ok(None, 1.0), ok(ONE, 2.0), KeyboardInterrupt]
    code, out, err = run(
        capsys, "bench", "--a", "none", "--b", "one-thread", "--workload", "gemm", "--reps", "2"
    )
    assert code == 130
    assert fake_jobs.cancels == 1 and len(fake_jobs.started) == 3
    assert "rocmpanel bench: cancelled; the worker was stopped.\n" in err
    assert (
        "rocmpanel bench: Cancelled after 2 of 4 runs; the figures are from the runs that "
        "finished.\n"
    ) in err
    [saved] = load_results()
    assert saved.cancelled and [(c.a, c.b) for c in saved.cases] == [((1.0,), (2.0,))]
    assert out.splitlines()[2].split("  ")[0] == "g"
    assert "too few runs to judge (2 of each side needed)" in out
    assert out.splitlines()[-1] == f"Saved as {saved.id}."


def test_each_worker_gets_its_side_preset_header(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob]
) -> None:
    user_preset()
    fake_jobs.script = [ok(None, 1.0), ok(ONE, 2.0), ok(None, 1.1), ok(ONE, 2.1)]
    code, _, err = run(
        capsys, "bench", "--a", "none", "--b", "One thread", "--workload", "alloc",
        "--reps", "2", "--quick", "--python", sys.executable,
    )  # fmt: skip
    assert code == 0, err
    headers = [job.env.get(HEADER_VAR) for job in fake_jobs.started]
    assert headers[0] is None and headers[2] is None
    assert json.loads(str(headers[1])) == {
        "id": "one-thread",
        "name": "One thread",
        "torch": {"cpu_threads": 1},
    }
    assert headers[3] == headers[1]
    argv = fake_jobs.started[0].argv
    assert argv[0] == sys.executable and argv[3:] == (
        "--workload", "alloc", "--device", "auto", "--quick",
    )  # fmt: skip


def test_a_failed_run_exits_1_and_names_it(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob]
) -> None:
    from rocmpanel.jobs.protocol import WorkerError

    error = WorkerError(message="Out of memory during the gemm benchmark on cuda.", kind="oom")
    failed = JobOutcome(JobState.FAILED, 1, "the worker failed", error=error)
    fake_jobs.script = [ok(None, 1.0), failed]
    code, out, err = run(capsys, "bench", "--a", "none", "--b", "none", "--workload", "gemm")
    assert code == 1
    assert len(fake_jobs.started) == 2
    assert err.splitlines()[-2:] == [
        "rocmpanel bench: Run 1 of B (none) failed: Out of memory during the gemm benchmark "
        "on cuda.",
        "rocmpanel bench: g: measured under A only; not compared.",
    ]
    assert "No case was measured on both sides." in out
