"""``rocmpanel presets`` and ``rocmpanel bench``: list, show, validate (good and broken
files), export, refusals, and a real A/B run on CPU torch (none against a one-thread
preset) through the command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from rocmpanel.base import paths
from rocmpanel.jobs.preset_text import source_text
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
    assert data["active"] is None
    mine = data["presets"][-1]
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
    assert "bad" not in [p["id"] for p in data["presets"]]
    assert err == (
        f"rocmpanel presets: skipped {broken}, line 4: torch.cpu_threads: must be from 1 to "
        "4096; got 0\n"
    )
    assert broken.read_text(encoding="utf-8") == BROKEN  # never overwritten


def test_show_prints_each_item_with_why_source_and_effect(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.tuning import presets_cli as cli

    monkeypatch.setattr(cli, "this_target", lambda: Target(platform="linux", gfx=None))
    code, out, err = run(capsys, "presets", "show", "Debugging")
    assert code == 0 and err == ""
    preset = next(p for p in builtin_presets() if p.id == "debugging")
    assert out.splitlines()[0] == "Debugging (debugging; built-in)"
    assert "Items (on this machine: linux, GPU not detected):" in out
    for item in preset.items():
        # No GPU seen: a GPU setting's effect is not checked, never a bare "applies".
        assert f"  env {item.key} = {item.value}  [not checked: no AMD GPU detected]" in out
        assert f"      {item.why}\n      source: {source_text(item.source)}\n" in out
    assert "source: clr\n" not in out  # catalogue keys are spelled out


SHOWN = """id: shown
name: Shown
torch:
  tunableop:
    value: {enabled: true, tuning: false}
    why: Keeps GEMM results.
    source: pt_tune
  sdpa_backends: [flash, math]
env:
  MIOPEN_FIND_MODE: FAST
"""


def test_show_values_in_words_sources_spelled_out_and_three_kinds_of_effect(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.jobs import presets
    from rocmpanel.jobs.presets import Effect
    from rocmpanel.tuning import presets_cli as cli

    user_preset(SHOWN, "shown")
    monkeypatch.setattr(cli, "this_target", lambda: Target(platform="linux", gfx="gfx1100"))
    notes = [
        (True, True, ""),
        (False, True, "gfx1100 lacks it"),
        (True, False, "not checked: depends on the torch release"),
    ]

    def effects(preset: object, target: object) -> list[Effect]:
        items = presets.Preset.items(preset)  # type: ignore[arg-type]
        return [Effect(i, a, n, checked=c) for i, (a, c, n) in zip(items, notes, strict=True)]

    monkeypatch.setattr(presets, "item_effects", effects)
    code, out, err = run(capsys, "presets", "show", "shown")
    assert code == 0 and err == ""
    items = out.split("Items (on this machine: linux, gfx1100):\n")[1].splitlines()
    assert [line for line in items if not line.startswith("      ")] == [
        "  env MIOPEN_FIND_MODE = FAST  [applies]",
        "  torch tunableop = on, saved results only  [no effect here: gfx1100 lacks it]",
        "  torch sdpa_backends = flash, math  [not checked: depends on the torch release]",
    ]
    assert items[2:4] == ["      Keeps GEMM results.", f"      source: {source_text('pt_tune')}"]
    code, out, _ = run(capsys, "presets", "show", "shown", "--json")
    data = json.loads(out)
    assert [(i["key"], i["applies"], i["checked"], i["note"]) for i in data["items"]] == [
        ("MIOPEN_FIND_MODE", True, True, ""),
        ("tunableop", False, True, "gfx1100 lacks it"),
        ("sdpa_backends", True, False, "not checked: depends on the torch release"),
    ]


def test_show_json_marks_what_has_no_effect_on_the_gpu(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.jobs.presets import item_effects
    from rocmpanel.tuning import presets_cli as cli

    target = Target(platform="linux", gfx="gfx1100")
    monkeypatch.setattr(cli, "this_target", lambda: target)
    code, out, _ = run(capsys, "presets", "show", "cdna3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["target"] == {"platform": "linux", "gfx": "gfx1100"}
    preset = next(p for p in builtin_presets() if p.id == "cdna3")
    expected = [(e.applies, e.checked, e.note) for e in item_effects(preset, target)]
    assert [(i["applies"], i["checked"], i["note"]) for i in data["items"]] == expected
    assert not all(applies for applies, _, _ in expected)  # an MI300 preset on an RDNA3 card


def test_show_an_unknown_preset_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "presets", "show", "nope")
    known = ", ".join(p.id for p in builtin_presets())
    assert (code, out) == (2, "")
    assert err == f"rocmpanel presets: There is no preset 'nope'. Known presets: {known}.\n"


def test_show_a_preset_whose_file_is_damaged_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    folder = paths.config_dir() / "presets"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("id: mine\nname: Mine\narchs: [rdna9]\n")
    code, out, err = run(capsys, "presets", "show", "mine")
    assert (code, out) == (2, "")
    assert err.startswith("rocmpanel presets: The preset 'mine' cannot be used: ")
    assert "mine.yaml, line 3: archs" in err and "There is no preset" not in err


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
        f"{missing}: file: cannot be read: No such file or directory",
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_validate_refuses_a_fifo_and_a_file_over_the_limit_without_reading_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A FIFO would block a plain read forever and /dev/zero never ends: validate reads
    through the bounded preset reader (regular files up to 4 MiB) and says why not."""
    fifo, huge, good = tmp_path / "pipe.yaml", tmp_path / "huge.yaml", tmp_path / "good.yaml"
    os.mkfifo(fifo)
    with huge.open("wb") as out:  # sparse: just over the limit, no disk used
        out.truncate(4 * 1024 * 1024 + 1)
    good.write_text(ONE_THREAD, encoding="utf-8")
    code, out, _ = run(capsys, "presets", "validate", str(fifo), str(huge), str(good))
    assert code == 1
    assert out.splitlines() == [
        f"{fifo}: file: is not a regular file; it is not read",
        f"{huge}: file: is larger than 4 MiB",
        f"{good}: ok (one-thread, 1 item)",
    ]
    code, out, _ = run(capsys, "presets", "validate", str(fifo), "--json")
    problem = f"{fifo}: file: is not a regular file; it is not read"
    assert json.loads(out) == [{"file": str(fifo), "ok": False, "problem": problem}]


def test_validate_a_file_of_exactly_the_limit_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    edge = tmp_path / "edge.yaml"
    edge.write_text(ONE_THREAD + "#" * (4 * 1024 * 1024 - len(ONE_THREAD)), encoding="utf-8")
    assert edge.stat().st_size == 4 * 1024 * 1024
    code, out, _ = run(capsys, "presets", "validate", str(edge))
    assert (code, out) == (0, f"{edge}: ok (one-thread, 1 item)\n")


def test_validate_only_good_files_exits_0_and_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(ONE_THREAD, encoding="utf-8")
    code, out, _ = run(capsys, "presets", "validate", str(good), "--json")
    assert code == 0
    assert json.loads(out) == [
        {"file": str(good), "ok": True, "id": "one-thread", "items": 1, "notes": []}
    ]


def test_validate_notes_a_variable_rocmpanel_does_not_know_and_still_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text(
        'id: typo\nname: Typo\nenv:\n  MIOPEN_FIND_MOD: "FAST"\n  MIOPEN_FIND_MODE: "FAST"\n',
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "presets", "validate", str(typo))
    assert code == 0
    assert out.splitlines() == [
        f"{typo}: ok (typo, 2 items)",
        "  note: MIOPEN_FIND_MOD is not a variable rocmpanel knows: check the spelling",
    ]
    code, out, _ = run(capsys, "presets", "validate", str(typo), "--json")
    assert code == 0
    assert json.loads(out)[0]["notes"] == [
        "note: MIOPEN_FIND_MOD is not a variable rocmpanel knows: check the spelling"
    ]


def test_use_sets_the_active_preset_list_marks_it_and_none_clears_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rocmpanel.base.settings import Settings

    user_preset()
    code, out, err = run(capsys, "presets", "use", "One thread")
    assert (code, err) == (0, "")
    assert out == (
        "Jobs the command line starts from now on, and the panel's from its next start, run "
        "under One thread (one-thread). In a panel that is running, choose it in the Tuning "
        "tab.\n"
    )
    assert Settings.load().general.active_preset == "one-thread"
    code, out, _ = run(capsys, "presets", "list")
    assert out.splitlines()[-1] == "one-thread      One thread (user; any; 1 item)  [active]"
    assert sum("[active]" in line for line in out.splitlines()) == 1
    code, out, _ = run(capsys, "presets", "list", "--json")
    assert json.loads(out)["active"] == "one-thread"
    code, out, err = run(capsys, "presets", "use", "NONE")
    assert (code, err) == (0, "")
    assert out == (
        "Jobs the command line starts from now on, and the panel's from its next start, run "
        "without a preset. In a panel that is running, choose it in the Tuning tab.\n"
    )
    assert Settings.load().general.active_preset == ""
    code, out, _ = run(capsys, "presets", "list")
    assert "[active]" not in out


def test_use_an_unknown_preset_lists_the_known_ones_and_changes_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rocmpanel.base.settings import Settings

    code, out, err = run(capsys, "presets", "use", "nope")
    known = ", ".join(p.id for p in builtin_presets())
    assert (code, out) == (2, "")
    assert err == (
        f"rocmpanel presets: There is no preset 'nope'. Known presets: {known}; "
        'or "none" for no preset.\n'
    )
    assert Settings.load().general.active_preset == ""
    assert not (paths.config_dir() / "settings.yaml").exists()


def test_list_says_when_the_active_preset_is_gone(capsys: pytest.CaptureFixture[str]) -> None:
    path = user_preset()
    run(capsys, "presets", "use", "one-thread")
    path.unlink()
    code, out, err = run(capsys, "presets", "list")
    assert code == 0 and "[active]" not in out
    assert err == (
        "rocmpanel presets: the active preset 'one-thread' is not among the presets, so jobs "
        "run without one; choose another with `rocmpanel presets use NAME`.\n"
    )


def test_export_writes_a_file_that_validates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_file = tmp_path / "exported.yaml"
    code, out, _ = run(capsys, "presets", "export", "rdna3-consumer", "--out", str(out_file))
    assert code == 0
    assert out == f"Wrote RDNA3 consumer (rdna3-consumer) to {out_file}.\n"
    code, out, _ = run(capsys, "presets", "validate", str(out_file))
    assert code == 0 and out == f"{out_file}: ok (rdna3-consumer, 2 items)\n"


def test_export_refuses_a_missing_folder_and_creates_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "no" / "such" / "x.yaml"
    with pytest.raises(SystemExit) as caught:
        main(["presets", "export", "debugging", "--out", str(target)])
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rocmpanel presets export: error: argument --out: {target} cannot be written: the "
        f"folder {target.parent} does not exist. Create it first, or choose a file in a "
        "folder that exists."
    )
    assert not (tmp_path / "no").exists()
    with pytest.raises(SystemExit) as caught:
        main(["presets", "export", "debugging", "--out", str(tmp_path)])
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rocmpanel presets export: error: argument --out: {tmp_path} cannot be written: it "
        "is a folder. Give a file name."
    )


def test_bench_out_in_a_missing_folder_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob], tmp_path: Path
) -> None:
    target = tmp_path / "no" / "r.json"
    with pytest.raises(SystemExit) as caught:
        main(["bench", "--a", "none", "--b", "none", "--workload", "gemm", "--out", str(target)])
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rocmpanel bench: error: argument --out: {target} cannot be written: the folder "
        f"{target.parent} does not exist. Create it first, or choose a file in a folder that "
        "exists."
    )
    assert fake_jobs.started == [] and not (tmp_path / "no").exists()


def test_bench_unknown_preset_lists_the_known_ones_with_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "bench", "--a", "none", "--b", "nope", "--workload", "gemm")
    known = ", ".join(p.id for p in builtin_presets())
    assert (code, out) == (2, "")
    assert err == (
        f"rocmpanel bench: There is no preset 'nope'. Known presets: {known}; "
        'or "none" for no preset.\n'
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--reps", "1"], "argument --reps: 1 is below the minimum 2"),
        (["--reps", "51"], "argument --reps: 51 is above the maximum 50"),
        (["--workload", "fft"], "argument --workload: invalid choice: 'fft'"),
        (["--device", "tpu"], "argument --device: invalid choice: 'tpu'"),
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
    assert err == (
        "rocmpanel bench: The chat workload needs a model folder: choose a model in the Chat "
        "tab, or pass --model DIR to `rocmpanel bench`.\n"
    )


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
        # 2 runs a side never name a winner.
        assert case["verdict"] in (
            "no measurable difference",
            "too few runs to name a winner (2 per side; 5 needed)",
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
        if not isinstance(item, JobOutcome):  # a step to take while the run is out
            item = item()
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
    assert "too few runs to name a winner (1 per side; 5 needed)" in out
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
    assert err.splitlines()[-3:] == [
        "rocmpanel bench: Run 1 of B (none) failed: Out of memory during the gemm benchmark "
        "on cuda.",
        "rocmpanel bench: g: measured under A only; not compared.",
        "rocmpanel bench: no case was measured on both sides, so the result was not saved.",
    ]
    assert "No case was measured on both sides." in out
    assert load_results() == []
    assert not (paths.data_dir() / "bench").exists()


def test_a_run_with_nothing_measured_on_both_sides_is_neither_saved_nor_written(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob], tmp_path: Path
) -> None:
    """Every run finishes, but B's figures are unusable: nothing to compare, exit 1."""
    fake_jobs.script = [ok(None, 1.0), ok(None, 0.0), ok(None, 1.1), ok(None, -1.0)]
    target = tmp_path / "r.json"
    code, out, err = run(
        capsys, "bench", "--a", "none", "--b", "none", "--workload", "gemm", "--reps", "2",
        "--out", str(target), "--json",
    )  # fmt: skip
    assert code == 1
    data = json.loads(out)
    assert (data["saved"], data["cases"]) == (False, [])
    assert err.splitlines()[-4:] == [
        "rocmpanel bench: Run 1 of B (none): g: 0.0 is not a figure above zero; left out.",
        "rocmpanel bench: Run 2 of B (none): g: -1.0 is not a figure above zero; left out.",
        "rocmpanel bench: g: measured under A only; not compared.",
        "rocmpanel bench: no case was measured on both sides, so the result was not saved or "
        f"written to {target}.",
    ]
    assert load_results() == [] and not target.exists()


def outcome(preset: dict[str, str] | None, g: float, t: float) -> JobOutcome:
    """A worker result with a speed ("g", TFLOP/s) and a time ("t", ms); side B reports a
    GPU-only setting that had no effect and one that applied."""
    settings = []
    if preset is not None:
        settings = [
            {"key": "tunableop", "value": {"enabled": True}, "applied": False,
             "note": "no effect on CPU"},
            {"key": "cpu_threads", "value": 1, "applied": True, "note": "set"},
        ]  # fmt: skip
    data = {
        "cases": [
            {"case": "g", "unit": "TFLOP/s", "higher_is_better": True, "value": g},
            {"case": "t", "unit": "ms", "higher_is_better": False, "value": t},
        ],
        "device": "cpu",
        "device_label": "CPU",
        "torch_version": "2.13.0+cpu",
        "preset": preset,
        "preset_settings": settings,
    }
    return JobOutcome(JobState.SUCCEEDED, 0, "done", result=data)


A_G, B_G = [1.0, 1.1, 0.9, 1.05, 0.95], [2.0, 2.2, 1.8, 2.1, 1.9]
A_T, B_T = [0.0002738, 0.00028, 0.00027, 0.000275, 0.000272], [13.661, 0.0003, 12.0, 14.0, 13.0]


def test_bench_table_five_runs_names_a_winner_and_what_had_no_effect(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob], tmp_path: Path
) -> None:
    user_preset()
    fake_jobs.script = [
        outcome(side, g, t)
        for ag, bg, at, bt in zip(A_G, B_G, A_T, B_T, strict=True)
        for side, g, t in ((None, ag, at), (ONE, bg, bt))
    ]
    csv_file = tmp_path / "result.csv"
    code, out, err = run(
        capsys, "bench", "--a", "none", "--b", "one-thread", "--workload", "gemm",
        "--out", str(csv_file),
    )  # fmt: skip
    assert code == 0, err
    [saved] = load_results()
    assert out.splitlines() == [
        "A: none   B: One thread   workload: gemm   on CPU (torch 2.13.0+cpu)",
        "case  unit                  A median  B median  ratio       spread             verdict",
        "g     TFLOP/s               1         2         2×          1.64×–2.44×        "
        "B faster by 100 %",
        "t     ms (lower is better)  0.000274  13        0.0000211×  0.0000193×–0.933×  "
        "A 47480× as fast",
        "10 runs; ratio above 1 means B is better (for times A/B); spread: worst to best of "
        "each side.",
        "B (One thread): settings that had no effect: tunableop (no effect on CPU).",
        f"Saved as {saved.id}.",
        f"Written to {csv_file}.",
    ]
    lines = csv_file.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("case,unit,higher_is_better,a_median,b_median,")
    assert lines[1].startswith("g,TFLOP/s,yes,1,2,2.0000,")


def test_bench_out_must_be_json_or_csv(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["bench", "--a", "none", "--b", "none", "--workload", "gemm", "--out", "r.txt"])
    assert caught.value.code == 2
    assert (
        "argument --out: 'r.txt' does not end in .json or .csv: a benchmark result is "
        "written as one of those"
    ) in capsys.readouterr().err


@pytest.mark.parametrize(
    ("word", "device"), [("gpu", "cuda"), ("GPU", "cuda"), ("cuda", "cuda"), ("CPU", "cpu")]
)
def test_bench_device_takes_the_words_chat_takes(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob], word: str, device: str
) -> None:
    fake_jobs.script = [ok(None, 1.0), ok(None, 2.0), ok(None, 1.1), ok(None, 2.1)]
    code, _, err = run(
        capsys, "bench", "--a", "none", "--b", "none", "--workload", "gemm", "--reps", "2",
        "--device", word,
    )  # fmt: skip
    assert code == 0, err
    assert {job.argv[3:7] for job in fake_jobs.started} == {
        ("--workload", "gemm", "--device", device)
    }
    [saved] = load_results()
    assert saved.plan.device == device


def test_a_preset_edited_during_the_run_stops_it_naming_what_changed(
    capsys: pytest.CaptureFixture[str], fake_jobs: type[FakeJob]
) -> None:
    path = user_preset(ONE_THREAD.replace("torch:", "env:\n  MIOPEN_FIND_MODE: FAST\ntorch:"))

    def edit_then_finish() -> JobOutcome:
        path.write_text(
            ONE_THREAD.replace("torch:", "env:\n  MIOPEN_FIND_MODE: NORMAL\ntorch:"),
            encoding="utf-8",
        )
        return ok(ONE, 2.0)

    fake_jobs.script = [ok(None, 1.0), edit_then_finish, ok(None, 1.1), ok(ONE, 2.1)]
    code, _, err = run(
        capsys, "bench", "--a", "none", "--b", "one-thread", "--workload", "gemm", "--reps", "2"
    )
    assert code == 1
    assert len(fake_jobs.started) == 4
    assert [job.env.get("MIOPEN_FIND_MODE") for job in fake_jobs.started] == [
        None, "FAST", None, "NORMAL"
    ]  # fmt: skip
    assert (
        "rocmpanel bench: Run 2 of B (One thread) did not run under the same settings as run 1 "
        "of B: MIOPEN_FIND_MODE changed in between (the preset or the panel's job variables "
        "were edited during the benchmark); its figures were not used. Run the benchmark "
        "again to compare.\n"
    ) in err
    [saved] = load_results()
    assert [(c.a, c.b) for c in saved.cases] == [((1.0, 1.1), (2.0,))]
    assert [r["env_hash"] is not None for r in saved.runs] == [True, True, True]


def test_presets_show_judges_the_first_discrete_gpu_as_the_tab_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from rocmpanel.machine import inventory
    from rocmpanel.machine.gpu_model import GpuInfo
    from rocmpanel.tuning import presets_cli

    igpu = GpuInfo("Radeon 780M", gfx="gfx1103", integrated=True)
    dgpu = GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", integrated=False)
    detected = SimpleNamespace(gpus=(igpu, dgpu))  # the laptop whose iGPU is listed first
    monkeypatch.setattr(inventory, "detect_inventory", lambda: detected)
    assert presets_cli.this_target().gfx == "gfx1100"

    def broken() -> object:
        raise OSError("no sysfs")

    monkeypatch.setattr(inventory, "detect_inventory", broken)
    assert presets_cli.this_target().gfx is None
