"""The A/B run (tuning/bench.py) and its statistics (tuning/bench_stats.py) on made-up
figures: the order of the runs, medians, the oriented ratio, its spread, the verdicts,
failure, cancellation; saving, loading and exporting results."""

from __future__ import annotations

import csv
import io
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.base import paths
from rocmpanel.base.errors import PanelError
from rocmpanel.tuning import bench_stats
from rocmpanel.tuning.bench import (
    ABRun,
    BenchPlan,
    BenchResult,
    env_hash,
    export_result,
    load_results,
    save_result,
)
from rocmpanel.tuning.bench_store import CSV_COLUMNS

PLAN = BenchPlan(a="none", b="one-thread", workload="gemm", reps=2, quick=True, device="cpu")
PRESETS = {"A": None, "B": {"id": "one-thread", "name": "One thread"}}


def worker_result(side: str, **figures: float) -> dict[str, Any]:
    """A bench worker's result event data: TFLOP/s figures, or ms for names with "ms"."""
    return {
        "cases": [
            {"case": name, "unit": "ms", "higher_is_better": False, "value": value}
            if name.endswith("ms")
            else {"case": name, "unit": "TFLOP/s", "higher_is_better": True, "value": value}
            for name, value in figures.items()
        ],
        "device": "cpu",
        "device_label": "CPU",
        "torch_version": "2.13.0+cpu",
        "preset": PRESETS[side],
        "preset_settings": [],
    }


def run_through(run: ABRun, figures: list[dict[str, float]]) -> list[str]:
    """Feed one made-up result per run handed out; returns the presets in launch order."""
    order = []
    for values in figures:
        spec = run.next_spec()
        assert spec is not None
        order.append(str(spec.preset))
        side = "A" if spec.preset == "none" else "B"
        run.record(worker_result(side, **values))
    assert run.next_spec() is None
    return order


# -- the statistics --------------------------------------------------------------------------
def test_higher_is_better_ratio_and_min_max_spread() -> None:
    ratio, low, high = bench_stats.ratio_and_spread([1.0, 2.0, 3.0], [3.0, 4.0, 6.0], True)
    assert (ratio, low, high) == (2.0, 1.0, 6.0)


def test_lower_is_better_is_oriented_so_above_one_means_b_better() -> None:
    ratio, low, high = bench_stats.ratio_and_spread([10.0, 12.0], [4.0, 6.0], False)
    assert ratio == 11.0 / 5.0
    assert (low, high) == (10.0 / 6.0, 3.0)


@pytest.mark.parametrize(
    ("ratio", "low", "high", "unit", "expected"),
    [
        (1.25, 1.1, 1.4, "TFLOP/s", "B faster by 25 %"),
        (0.8, 0.7, 0.9, "tok/s", "A faster by 25 %"),
        (1.045, 1.01, 1.08, "ms", "B faster by 4.5 %"),
        (1.5, 1.2, 1.8, "x", "B better by 50 %"),
        (1.3, 0.99, 1.6, "TFLOP/s", "no measurable difference"),
        (1.3, 1.0, 1.6, "TFLOP/s", "no measurable difference"),  # ranges just touch
        (0.7, 0.5, 1.0, "ms", "no measurable difference"),
        # Up to 2× a percentage, beyond it a factor ("faster by 220 %" reads badly).
        (2.0, 1.5, 2.5, "TFLOP/s", "B faster by 100 %"),
        (0.5, 0.4, 0.6, "ms", "A faster by 100 %"),
        (2.01, 1.5, 2.5, "TFLOP/s", "B 2.01× as fast"),
        (3.2, 3.0, 3.4, "ms", "B 3.2× as fast"),
        (1 / 4.7, 0.2, 0.25, "tok/s", "A 4.7× as fast"),
        (1 / 47393.4, 1e-5, 1e-4, "ms", "A 47393× as fast"),
        (3.2, 3.0, 3.4, "x", "B 3.2× better"),
        (1 / 2.5, 0.3, 0.5, "x", "A 2.5× better"),
        (0.6, 0.5, 0.7, "x", "A better by 67 %"),
    ],
)
def test_verdicts(ratio: float, low: float, high: float, unit: str, expected: str) -> None:
    assert bench_stats.verdict(ratio, low, high, unit, (5, 5)) == expected


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ((2, 2), "too few runs to name a winner (2 per side; 5 needed)"),
        ((4, 4), "too few runs to name a winner (4 per side; 5 needed)"),
        ((5, 4), "too few runs to name a winner (5 of A, 4 of B; 5 needed)"),
        ((1, 2), "too few runs to name a winner (1 of A, 2 of B; 5 needed)"),
        ((5, 5), "B faster by 100 %"),
        ((50, 6), "B faster by 100 %"),
    ],
)
def test_a_winner_needs_5_runs_of_each_side(runs: tuple[int, int], expected: str) -> None:
    assert bench_stats.verdict(2.0, 1.5, 2.5, "ms", runs) == expected


@pytest.mark.parametrize("runs", [(1, 1), (2, 2), (4, 4), (5, 5)])
def test_overlapping_ranges_read_no_difference_at_any_count(runs: tuple[int, int]) -> None:
    assert bench_stats.verdict(1.3, 0.9, 1.6, "ms", runs) == "no measurable difference"


def test_chance_of_a_false_winner_between_identical_presets() -> None:
    """2 / C(2n, n): the arithmetic bench_stats and docs/tuning-json.md give."""
    chances = [bench_stats.false_winner_chance(n) for n in (2, 3, 4, 5)]
    assert chances == [2 / 6, 2 / 20, 2 / 70, 2 / 252]
    assert chances[3] < 0.008 < chances[2]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0002738, "0.000274"),
        (13.661, "13.7"),
        (254.311, "254"),
        (1234.6, "1235"),
        (0.055, "0.055"),
        (2.0, "2"),
        (0.0009996, "0.001"),
        (999.6, "1000"),
        (1.0, "1"),
        (3e-8, "3e-08"),
        (2.5e7, "2.5e+07"),
    ],
)
def test_figures_have_3_significant_digits(value: float, text: str) -> None:
    assert bench_stats.figure(value) == text


def test_ratio_text() -> None:
    assert bench_stats.ratio_text(2.0833) == "2.08×"
    assert bench_stats.ratio_text(254.311) == "254×"
    assert bench_stats.ratio_text(0.05512) == "0.0551×"


def test_spread_text() -> None:
    assert bench_stats.spread_text(0.055, 254.311) == "0.055×–254×"


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), True])
def test_a_figure_that_is_no_positive_number_is_refused(bad: float) -> None:
    assert not bench_stats.valid(bad)
    with pytest.raises(ValueError, match="finite number above zero"):
        bench_stats.ratio_and_spread([1.0, bad], [1.0], True)


# -- the run ---------------------------------------------------------------------------------
def test_runs_alternate_a_b_in_fresh_workers_with_their_presets() -> None:
    run = ABRun(dataclasses_replace(PLAN, reps=3), "none", "One thread")
    assert run.progress == (0, 6)
    specs = []
    while (spec := run.next_spec()) is not None:
        specs.append(spec)
        side = "A" if spec.preset == "none" else "B"
        run.record(worker_result(side, g=1.0))
    assert [s.preset for s in specs] == ["none", "one-thread"] * 3
    assert {s.worker for s in specs} == {"bench"}
    assert specs[0].args == ("--workload", "gemm", "--device", "cpu", "--quick")
    assert specs[0].name == "A/B benchmark (gemm): A none 1/3"
    assert specs[5].name == "A/B benchmark (gemm): B One thread 3/3"
    assert run.progress == (6, 6)


def test_medians_ratio_spread_and_verdicts_of_a_finished_run() -> None:
    run = ABRun(dataclasses_replace(PLAN, reps=3), "none", "One thread")
    run_through(
        run,
        [
            {"fast": 1.0, "same": 5.0, "lat ms": 10.0},
            {"fast": 2.0, "same": 5.5, "lat ms": 4.0},
            {"fast": 1.2, "same": 6.0, "lat ms": 12.0},
            {"fast": 2.4, "same": 4.5, "lat ms": 6.0},
            {"fast": 1.1, "same": 5.2, "lat ms": 11.0},
            {"fast": 2.2, "same": 5.0, "lat ms": 5.0},
        ],
    )
    result = run.result()
    assert result.device_label == "CPU" and result.torch_version == "2.13.0+cpu"
    assert result.errors == [] and not result.cancelled
    fast, same, lat = result.cases
    assert (fast.a, fast.b) == ((1.0, 1.2, 1.1), (2.0, 2.4, 2.2))
    assert (fast.a_median, fast.b_median, fast.ratio) == (1.1, 2.2, 2.0)
    assert (fast.ratio_low, fast.ratio_high) == (2.0 / 1.2, 2.4 / 1.0)
    # 3 runs a side: apart, but too few to name a winner (10 % of A/A runs would).
    assert fast.verdict == "too few runs to name a winner (3 per side; 5 needed)"
    assert same.verdict == "no measurable difference"
    assert (lat.unit, lat.higher_is_better, lat.a_median, lat.b_median) == ("ms", False, 11, 5)
    assert lat.ratio == 11.0 / 5.0
    assert lat.verdict == "too few runs to name a winner (3 per side; 5 needed)"
    assert [(r["side"], r["run"], r["preset"]) for r in result.runs] == [
        ("A", 1, None),
        ("B", 1, PRESETS["B"]),
        ("A", 2, None),
        ("B", 2, PRESETS["B"]),
        ("A", 3, None),
        ("B", 3, PRESETS["B"]),
    ]


def test_five_runs_of_each_side_name_the_winner() -> None:
    run = ABRun(dataclasses_replace(PLAN, reps=5), "none", "One thread")
    a = [1.0, 1.2, 1.1, 0.9, 1.05]
    b = [2.0, 2.4, 2.2, 1.9, 2.1]
    run_through(run, [{"g": v} for pair in zip(a, b, strict=True) for v in pair])
    [case] = run.result().cases
    assert (case.a_median, case.b_median) == (1.05, 2.1)
    assert case.verdict == "B faster by 100 %"


@pytest.mark.parametrize("reps", [0, 1, 51])
def test_repetitions_outside_2_to_50_are_refused(reps: int) -> None:
    with pytest.raises(PanelError) as caught:
        ABRun(dataclasses_replace(PLAN, reps=reps), "none", "One thread")
    assert caught.value.message == (
        f"{reps} repetitions cannot be run: choose 2 to 50 (the spread needs at least 2 "
        "runs of each side)."
    )


def test_boundaries_2_and_50_repetitions_are_accepted() -> None:
    assert ABRun(dataclasses_replace(PLAN, reps=2), "a", "b").progress == (0, 4)
    assert ABRun(dataclasses_replace(PLAN, reps=50), "a", "b").progress == (0, 100)


def test_unknown_workload_and_chat_without_a_model_are_refused() -> None:
    with pytest.raises(PanelError) as caught:
        ABRun(dataclasses_replace(PLAN, workload="fft"), "a", "b")
    assert caught.value.message == (
        "Unknown benchmark workload 'fft'; choose one of gemm, sdpa, alloc, chat."
    )
    with pytest.raises(PanelError) as caught:
        ABRun(dataclasses_replace(PLAN, workload="chat"), "a", "b")
    assert caught.value.message == (
        "The chat workload needs a model folder: choose a model in the Chat tab, or pass "
        "--model DIR to `rocmpanel bench`."
    )
    chat = ABRun(dataclasses_replace(PLAN, workload="chat", model="/m"), "a", "b")
    spec = chat.next_spec()
    assert spec is not None
    assert spec.args == ("--workload", "chat", "--device", "cpu", "--quick", "--model", "/m")


def test_a_failed_run_stops_and_keeps_what_was_measured() -> None:
    run = ABRun(PLAN, "none", "One thread")
    for side, value in (("A", 1.0), ("B", 2.0), ("A", 1.1)):
        assert run.next_spec() is not None
        run.record(worker_result(side, g=value))
    assert run.next_spec() is not None
    run.failed("Out of memory during the gemm benchmark on cuda.")
    assert run.next_spec() is None
    assert run.progress == (4, 4)
    result = run.result()
    [case] = result.cases
    assert (case.a, case.b) == ((1.0, 1.1), (2.0,))
    assert case.verdict == "too few runs to name a winner (2 of A, 1 of B; 5 needed)"
    assert result.errors == [
        "Run 2 of B (One thread) failed: Out of memory during the gemm benchmark on cuda."
    ]


def test_cancel_keeps_the_finished_runs_and_says_so() -> None:
    run = ABRun(PLAN, "none", "One thread")
    assert run.next_spec() is not None
    run.record(worker_result("A", g=1.0))
    assert run.next_spec() is not None  # B is running when the user cancels
    run.cancel()
    assert run.next_spec() is None
    result = run.result()
    assert result.cancelled
    assert result.cases == []
    assert result.errors == [
        "Cancelled after 1 of 4 runs; the figures are from the runs that finished.",
        "g: measured under A only; not compared.",
    ]


def test_a_run_under_the_wrong_preset_is_not_counted() -> None:
    run = ABRun(PLAN, "none", "One thread")
    assert run.next_spec() is not None
    run.record(worker_result("B", g=1.0))  # A's worker reports B's preset
    assert run.next_spec() is None
    result = run.result()
    assert result.cases == [] and result.runs == []
    assert result.errors == [
        "Run 1 of A (none) did not run under its preset: the worker reported one-thread, "
        "not no preset; its figures were not used."
    ]


def test_a_run_on_another_device_is_not_counted() -> None:
    run = ABRun(PLAN, "none", "One thread")
    run.next_spec()
    run.record(worker_result("A", g=1.0))
    run.next_spec()
    other = worker_result("B", g=1.0) | {"device_label": "AMD Radeon RX 7900 XTX (gfx1100)"}
    run.record(other)
    assert run.result().errors == [
        "Run 1 of B (One thread) ran on AMD Radeon RX 7900 XTX (gfx1100) with torch "
        "2.13.0+cpu, the earlier runs on CPU with torch 2.13.0+cpu; its figures were not used.",
        "g: measured under A only; not compared.",
    ]


def test_bad_figures_are_left_out_and_named() -> None:
    run = ABRun(PLAN, "none", "One thread")
    run.next_spec()
    data = worker_result("A", g=0.0)
    data["cases"].append("garbage")
    run.record(data)
    assert run.result().errors == [
        "Run 1 of A (none): g: 0.0 is not a figure above zero; left out.",
        "Run 1 of A (none) sent a case the panel cannot read: 'garbage'.",
    ]


def setting(key: str, value: object, note: str = "done") -> dict[str, Any]:
    return {"key": key, "value": value, "applied": True, "note": note}


def b_run(settings: list[dict[str, Any]], header_hash: str | None = "abc") -> dict[str, Any]:
    return worker_result("B", g=2.0) | {"preset_settings": settings, "preset_hash": header_hash}


def run_to_second_b(first: dict[str, Any], env: dict[str, str | None] | None = None) -> ABRun:
    """A run with A 1, B 1 (``first``, launched with ``env``) and A 2 recorded; B 2 out."""
    run = ABRun(PLAN, "none", "One thread")
    run.next_spec()
    run.record(worker_result("A", g=1.0), env={})
    run.next_spec()
    run.record(first, env=env)
    run.next_spec()
    run.record(worker_result("A", g=1.1), env={})
    assert run.next_spec() is not None
    return run


SAME_AS_RUN_1 = (
    "Run 2 of B (One thread) did not run under the same settings as run 1 of B: {} changed "
    "in between (the preset or the panel's job variables were edited during the benchmark); "
    "its figures were not used. Run the benchmark again to compare."
)


@pytest.mark.parametrize(
    ("second", "changed"),
    [
        (b_run([setting("cpu_threads", 2)]), "the torch setting cpu_threads"),
        (b_run([setting("cpu_threads", 1), setting("cudnn_benchmark", True)]),
         "the torch setting cudnn_benchmark"),
        (b_run([]), "the torch setting cpu_threads"),
        (b_run([setting("cpu_threads", 1)], header_hash="def"), "its preset header"),
    ],
)  # fmt: skip
def test_a_side_whose_preset_changed_during_the_run_stops_it(
    second: dict[str, Any], changed: str
) -> None:
    run = run_to_second_b(b_run([setting("cpu_threads", 1)]))
    run.record(second)
    assert run.stopped and run.pending_side is None
    assert run.next_spec() is None
    result = run.result()
    assert result.errors == [SAME_AS_RUN_1.format(changed)]
    assert [(c.a, c.b) for c in result.cases] == [((1.0, 1.1), (2.0,))]
    assert len(result.runs) == 3


def test_a_later_run_that_only_says_something_else_is_counted() -> None:
    """The notes say what was done ("kept your ..."): only the settings themselves count."""
    run = run_to_second_b(b_run([setting("cpu_threads", 1, "set")]), env={"X": "1"})
    run.record(b_run([setting("cpu_threads", 1, "another note")]), env={"X": "1"})
    assert not run.stopped and run.result().errors == []
    assert [r["preset_hash"] for r in run.result().runs] == [None, "abc", None, "abc"]


@pytest.mark.parametrize(
    ("first", "second", "changed"),
    [
        ({"MIOPEN_FIND_MODE": "FAST"}, {"MIOPEN_FIND_MODE": "NORMAL"}, "MIOPEN_FIND_MODE"),
        ({}, {"HSA_X": "1"}, "HSA_X"),  # a first run launched with nothing added counts too
        ({"HSA_X": "1"}, {"HSA_X": None}, "HSA_X"),  # unset by the user's job variables
        (
            {f"V{n}": "1" for n in range(7)},
            {f"V{n}": "2" for n in range(7)},
            "V0, V1, V2, V3, V4, 2 more variables",
        ),
    ],
)
def test_a_side_launched_with_other_variables_stops_the_run(
    first: dict[str, str | None], second: dict[str, str | None], changed: str
) -> None:
    settings = [setting("cpu_threads", 1)]
    run = run_to_second_b(b_run(settings), env=first)
    run.record(b_run(settings), env=second)
    assert run.result().errors == [SAME_AS_RUN_1.format(changed)]


def test_without_the_launched_env_only_the_workers_report_is_compared() -> None:
    settings = [setting("cpu_threads", 1)]
    run = run_to_second_b(b_run(settings), env=None)
    run.record(b_run(settings), env={"ANY": "1"})
    assert not run.stopped
    assert run.result().runs[1]["env_hash"] is None
    assert run.result().runs[3]["env_hash"] == env_hash({"ANY": "1"})


def test_env_hash_is_12_hex_digits_of_the_sorted_json() -> None:
    import hashlib

    expected = hashlib.sha256(b'{"A":"1","B":null}').hexdigest()[:12]
    assert env_hash({"B": None, "A": "1"}) == expected
    assert env_hash({}) == hashlib.sha256(b"{}").hexdigest()[:12]


def test_pending_side_is_the_side_handed_out_until_it_is_recorded_or_failed() -> None:
    run = ABRun(PLAN, "none", "One thread")
    assert run.pending_side is None
    run.next_spec()
    assert run.pending_side == "A"
    run.record(worker_result("A", g=1.0))
    assert run.pending_side is None
    run.next_spec()
    assert run.pending_side == "B"
    run.failed("it crashed")
    assert run.pending_side is None
    other = ABRun(PLAN, "none", "One thread")
    other.next_spec()
    other.cancel()
    assert other.pending_side is None


def test_record_without_a_run_handed_out_is_a_bug() -> None:
    run = ABRun(PLAN, "none", "One thread")
    with pytest.raises(RuntimeError, match="no run was handed out"):
        run.record(worker_result("A", g=1.0))


# -- keeping results -------------------------------------------------------------------------
def finished_result() -> BenchResult:
    run = ABRun(PLAN, "none", "One thread")
    run_through(run, [{"g": 1.0}, {"g": 2.0}, {"g": 1.5}, {"g": 2.5}])
    return run.result()


def test_save_then_load_round_trips_and_never_overwrites() -> None:
    result = finished_result()
    first = save_result(result)
    second = save_result(result)
    folder = paths.data_dir() / "bench"
    assert first.id != second.id
    assert second.id == f"{first.id}-2"
    assert {p.name for p in folder.glob("*.json")} == {f"{first.id}.json", f"{second.id}.json"}
    loaded = load_results()
    assert [r.id for r in loaded] == [second.id, first.id]
    assert loaded[1] == first
    data = json.loads((folder / f"{first.id}.json").read_text(encoding="utf-8"))
    assert data["cases"][0]["verdict"] == "too few runs to name a winner (2 per side; 5 needed)"
    assert data["plan"]["reps"] == 2


def test_an_unreadable_result_is_skipped_logged_and_left_alone(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    good = save_result(finished_result(), tmp_path)
    bad = tmp_path / "20200101-000000-gemm.json"
    bad.write_text("{not json", encoding="utf-8")
    shape = tmp_path / "20200101-000001-gemm.json"
    shape.write_text('{"plan": 3}', encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert [r.id for r in load_results(tmp_path)] == [good.id]
    assert bad.read_text(encoding="utf-8") == "{not json"
    assert f"skipped the benchmark result {bad}" in caplog.text
    assert f"skipped the benchmark result {shape}" in caplog.text


def saved_data() -> dict[str, Any]:
    return finished_result().to_json()


def damaged(**changes: Any) -> dict[str, Any]:
    """A saved result's JSON with case 0's fields changed (a key "plan.X" changes the plan,
    "top.X" a top-level field)."""
    data = saved_data()
    for key, value in changes.items():
        where, _, name = key.rpartition("__")
        target = {"": data["cases"][0], "plan": data["plan"], "top": data}[where]
        target[name] = value
    return data


FIGURE = "must be a finite number above zero; got"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"a": "abc"}, 'cases[0].a must be a list; got "abc"'),
        ({"a": [1.0, "abc"]}, 'cases[0].a[1] must be a finite number above zero; got "abc"'),
        ({"b": []}, "cases[0].b is empty; a case has figures of both sides"),
        ({"ratio": None}, "cases[0].ratio must be a finite number above zero; got null"),
        ({"ratio_low": 0}, "cases[0].ratio_low must be a finite number above zero; got 0"),
        ({"ratio_high": True}, "cases[0].ratio_high must be a finite number above zero; got true"),
        ({"a_median": "1.25"}, 'cases[0].a_median must be a finite number above zero; got "1.25"'),
        ({"b_median": float("nan")}, f"cases[0].b_median {FIGURE} NaN"),
        ({"b": [2.0, float("inf")]}, f"cases[0].b[1] {FIGURE} Infinity"),
        ({"verdict": 3}, "cases[0].verdict must be a text; got 3"),
        ({"higher_is_better": "yes"}, 'cases[0].higher_is_better must be true or false; got "yes"'),
        ({"top__cases": {"g": 1}}, 'cases must be a list; got {"g": 1}'),
        ({"top__a_name": None}, "a_name must be a text; got null"),
        ({"top__started": "now"}, 'started must be a finite number; got "now"'),
        ({"top__runs": [3]}, "runs[0] must be a JSON object; got 3"),
        ({"top__plan": []}, "plan must be a JSON object; got []"),
        ({"plan__reps": 2.5}, "plan.reps must be a whole number; got 2.5"),
        ({"plan__workload": None}, "plan.workload must be a text; got null"),
    ],
)  # fmt: skip
def test_from_json_refuses_a_wrong_type_or_a_figure_that_is_no_finite_number(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        BenchResult.from_json(damaged(**changes))
    assert str(caught.value) == message


def test_from_json_names_a_missing_field() -> None:
    data = saved_data()
    del data["cases"][0]["ratio"]
    with pytest.raises(ValueError) as caught:
        BenchResult.from_json(data)
    assert str(caught.value) == "cases[0].ratio is missing"


def test_from_json_reads_back_what_to_json_wrote() -> None:
    result = finished_result()
    assert BenchResult.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_damaged_deep_and_huge_results_are_skipped_logged_and_left_alone(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    good = save_result(finished_result(), tmp_path)
    files = {
        "text": json.dumps(damaged(a="abc")),
        "null": json.dumps(damaged(ratio=None)),
        "nan": json.dumps(damaged(a_median=float("nan"))),  # json writes NaN
        "inf": json.dumps(damaged(b=[2.0, 1e999])).replace("Infinity", "1e999"),
        "deep": "[" * 100_000 + "]" * 100_000,
    }
    for name, text in files.items():
        (tmp_path / f"{name}.json").write_text(text, encoding="utf-8")
    (tmp_path / "latin1.json").write_bytes(b'{"a_name": "caf\xe9"}')
    huge = tmp_path / "huge.json"
    with huge.open("wb") as out:  # sparse: 20 MB that take no disk
        out.truncate(20_000_000)
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.json") if p != huge}
    with caplog.at_level(logging.WARNING):
        assert [r.id for r in load_results(tmp_path)] == [good.id]
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.json") if p != huge} == before
    assert huge.stat().st_size == 20_000_000
    logged = {r.getMessage() for r in caplog.records}
    shape = "it does not have the shape of a benchmark result: "
    assert logged == {
        f"skipped the benchmark result {tmp_path / 'text.json'}: {shape}"
        'cases[0].a must be a list; got "abc"',
        f"skipped the benchmark result {tmp_path / 'null.json'}: {shape}"
        "cases[0].ratio must be a finite number above zero; got null",
        f"skipped the benchmark result {tmp_path / 'nan.json'}: {shape}"
        "cases[0].a_median must be a finite number above zero; got NaN",
        f"skipped the benchmark result {tmp_path / 'inf.json'}: {shape}"
        "cases[0].b[1] must be a finite number above zero; got Infinity",
        f"skipped the benchmark result {tmp_path / 'deep.json'}: it nests too deeply to be "
        "a benchmark result",
        f"skipped the benchmark result {tmp_path / 'latin1.json'}: it is not UTF-8 text",
        f"skipped the benchmark result {huge}: it is larger than 4 MiB",
    }


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_among_the_results_is_skipped_without_blocking(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    fifo = tmp_path / "20200101-000000-gemm.json"
    os.mkfifo(fifo)
    good = save_result(finished_result(), tmp_path)
    with caplog.at_level(logging.WARNING):
        assert [r.id for r in load_results(tmp_path)] == [good.id]
    assert caplog.messages == [f"skipped the benchmark result {fifo}: it is not a regular file"]


def test_a_result_without_a_case_measured_on_both_sides_is_not_saved(tmp_path: Path) -> None:
    run = ABRun(PLAN, "none", "One thread")
    run.next_spec()
    run.record(worker_result("A", g=1.0))
    run.cancel()
    result = run.result()
    assert result.cases == []
    with pytest.raises(PanelError) as caught:
        save_result(result, tmp_path)
    assert caught.value.message == (
        "The benchmark result was not saved: no case was measured on both sides, so there "
        "is nothing to compare. The run's errors say what stopped it."
    )
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_a_missing_folder_and_creates_none(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "r.json"
    with pytest.raises(PanelError) as caught:
        export_result(finished_result(), target)
    assert caught.value.message == (
        f"{target} cannot be written: the folder {target.parent} does not exist. Create it "
        "first, or choose a file in a folder that exists."
    )
    assert not (tmp_path / "no").exists()
    (tmp_path / "d.json").mkdir()
    with pytest.raises(PanelError) as caught:
        export_result(finished_result(), tmp_path / "d.json")
    assert (
        caught.value.message
        == f"{tmp_path / 'd.json'} cannot be written: it is a folder. Give a file name."
    )


def test_export_json_and_csv(tmp_path: Path) -> None:
    result = finished_result()
    export_result(result, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8")) == result.to_json()
    export_result(result, tmp_path / "r.CSV")
    rows = list(csv.reader(io.StringIO((tmp_path / "r.CSV").read_text(encoding="utf-8"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[1] == [
        "g", "TFLOP/s", "yes", "1.25", "2.25", "1.8000", "1.3333", "2.5000",
        "too few runs to name a winner (2 per side; 5 needed)", "1 1.5", "2 2.5", "none",
        "One thread", "CPU", "2.13.0+cpu",
    ]  # fmt: skip
    assert len(rows) == 2


def test_export_backs_up_a_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("earlier", encoding="utf-8")
    export_result(finished_result(), target)
    backups = list(paths.backups_dir().rglob("*"))
    assert any(p.is_file() and p.read_text(encoding="utf-8") == "earlier" for p in backups)


def test_export_refuses_another_format(tmp_path: Path) -> None:
    with pytest.raises(PanelError) as caught:
        export_result(finished_result(), tmp_path / "r.txt")
    assert caught.value.message == (
        "r.txt cannot be written: a benchmark exports as .json or .csv."
    )
    assert not (tmp_path / "r.txt").exists()


def dataclasses_replace(plan: BenchPlan, **changes: Any) -> BenchPlan:
    import dataclasses

    return dataclasses.replace(plan, **changes)


def test_the_readme_and_the_json_docs_give_the_winner_runs_of_bench_stats() -> None:
    root = Path(__file__).resolve().parents[2]
    for doc in ("README.md", "docs/tuning-json.md"):
        text = " ".join((root / doc).read_text(encoding="utf-8").replace("**", "").split())
        assert f"only with {bench_stats.WINNER_RUNS} or more runs of each side" in text, doc
