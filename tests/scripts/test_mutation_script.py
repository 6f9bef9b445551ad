"""scripts/mutation.py: its configuration points at files that exist, every equivalent mutant
says why and belongs to a listed module, and the score leaves out exactly the equivalents."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

import mutation  # noqa: E402


def test_every_mutated_file_and_test_path_exists() -> None:
    modules = mutation.load_modules()
    assert sorted(modules) == [
        "compat",
        "env_formats",
        "env_store",
        "memory_estimate",
        "process",
        "sysfs_source",
        "torch_plan",
    ]
    for module in modules.values():
        for name in module.files:
            assert name.startswith("rocmpanel/") and name.endswith(".py"), name
            assert (ROOT / name).is_file(), f"{module.name}: {name} is gone"
        for name in module.tests:
            assert (ROOT / name).exists(), f"{module.name}: test path {name} is gone"


def test_each_equivalent_mutant_names_a_file_of_its_module_and_says_why() -> None:
    modules = mutation.load_modules()
    for path in sorted(mutation.EQUIVALENT.glob("*.toml")):
        module = modules.get(path.stem)
        assert module is not None, f"{path.name}: no module {path.stem} in modules.toml"
        prefixes = tuple(".".join(Path(f).with_suffix("").parts) + ".x" for f in module.files)
        data = mutation.tomllib.loads(path.read_text(encoding="utf-8"))
        for entry in data.get("equivalent", []):
            assert str(entry["mutant"]).startswith(prefixes), entry["mutant"]
            assert len(str(entry["why"]).split()) >= 5, f"{entry['mutant']}: say why"


def test_a_mutant_listed_without_why_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "process.toml").write_text(
        '[[equivalent]]\nmutant = "rocmpanel.jobs.process.x_f__mutmut_1"\nwhy = " "\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(mutation, "EQUIVALENT", tmp_path)
    with pytest.raises(SystemExit, match=r"process\.toml: rocmpanel.jobs.process.x_f__mutmut_1"):
        mutation.load_equivalent()


def test_score_counts_untested_mutants_against_and_leaves_equivalents_out() -> None:
    count = mutation.Count("m", total=10, killed=6)
    count.survived = ["a"]
    count.untested = ["b", "c"]
    count.equivalent = ["d"]
    assert count.counted == 9
    assert count.score == pytest.approx(100 * 6 / 9)
    assert mutation.Count("empty").score == 100.0


def test_unknown_module_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        mutation.main(["no_such_module"])
    assert stopped.value.code == 2
    assert "unknown module no_such_module; known: process, compat" in capsys.readouterr().err
