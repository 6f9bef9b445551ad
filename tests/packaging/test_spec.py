"""packaging/rocmpanel.spec evaluated with PyInstaller's build classes stubbed out (no
freeze: that is packaging/smoke.py's job, run by `.ci/run --frozen`), and the workers'
location in a bundle laid out the way the spec lays it out."""

from __future__ import annotations

import ast
import importlib
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "rocmpanel.spec"
QM = "resources/translations/rocmpanel_zh_CN.qm"


def spec_names() -> dict[str, str]:
    """The spec's NAMES literal (read without running the spec)."""
    for node in ast.parse(SPEC.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "NAMES":
            return dict(ast.literal_eval(node.value))
    raise AssertionError("no NAMES in the spec")


class Build:
    """What the spec asked PyInstaller for."""

    def __init__(self) -> None:
        self.analysis: dict[str, Any] = {}
        self.exes: list[dict[str, Any]] = []
        self.collect: dict[str, Any] = {}


def run_spec(root: Path, monkeypatch: pytest.MonkeyPatch, platform: str = "linux") -> Build:
    """Run the spec (copied under ``root``) with recording stand-ins for Analysis & co."""
    build = Build()
    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.collect_submodules = lambda name: [  # type: ignore[attr-defined]
        name,
        f"{name}.shell.cli",
        f"{name}.workers",
        f"{name}.workers.probe",
    ]
    for mod in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, mod, types.ModuleType(mod))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    monkeypatch.setattr(sys, "platform", platform)

    def analysis(scripts: list[str], **kwargs: Any) -> types.SimpleNamespace:
        build.analysis = dict(kwargs, scripts=scripts)
        # PyInstaller's TOC: (name in the bundle, source, kind); plus two of Qt's own files.
        datas = [(str(Path(dest) / Path(src).name), src, "DATA") for src, dest in kwargs["datas"]]
        datas += [
            ("PySide6/Qt/translations/qtbase_de.qm", "x", "DATA"),
            ("PySide6/Qt/translations/qtbase_zh_CN.qm", "x", "DATA"),
        ]
        return types.SimpleNamespace(datas=datas, binaries=[], scripts=["entry"], pure=[])

    def exe(*args: Any, **kwargs: Any) -> str:
        build.exes.append(kwargs)
        return str(kwargs["name"])

    def collect(*args: Any, **kwargs: Any) -> None:
        build.collect = dict(kwargs, items=args)

    spec = root / "packaging" / "rocmpanel.spec"
    code = compile(spec.read_text(encoding="utf-8"), str(spec), "exec")
    exec(  # the spec is a script run with these globals, as PyInstaller runs it
        code,
        {
            "SPECPATH": str(spec.parent),
            "Analysis": analysis,
            "PYZ": lambda pure: "pyz",
            "EXE": exe,
            "COLLECT": collect,
            "__file__": str(spec),
        },
    )
    return build


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small checkout: the real spec, a few resources and workers."""
    (tmp_path / "packaging").mkdir()
    shutil.copy(SPEC, tmp_path / "packaging")
    for rel in (
        "resources/__init__.py",
        "resources/compat.yaml",
        "resources/icons/hicolor/16x16/apps/rocmpanel.png",
        "resources/icons/.gitignore",
        "resources/translations/zh_CN/common.ts",
        QM,
        "rocmpanel/workers/__init__.py",
        "rocmpanel/workers/probe.py",
        "rocmpanel/workers/_wire.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    return tmp_path


def bundle_files(build: Build) -> set[str]:
    """Where each data file lands in the bundle (relative to _internal/)."""
    return {Path(dest, Path(src).name).as_posix() for src, dest in build.analysis["datas"]}


def test_resources_translations_and_workers_are_data(tree: Path, monkeypatch) -> None:
    build = run_spec(tree, monkeypatch)
    files = bundle_files(build)
    assert "rocmpanel/resources/compat.yaml" in files
    assert "rocmpanel/resources/icons/hicolor/16x16/apps/rocmpanel.png" in files
    assert "rocmpanel/resources/translations/rocmpanel_zh_CN.qm" in files
    assert "rocmpanel/resources/translations/zh_CN/common.ts" in files
    assert {"rocmpanel/workers/probe.py", "rocmpanel/workers/_wire.py"} <= files
    # Code is never data, and the package's own __init__ is frozen, not shipped.
    assert not {"rocmpanel/resources/__init__.py", "rocmpanel/workers/__init__.py"} & files
    assert "rocmpanel/resources/icons/.gitignore" not in files


def test_workers_are_not_frozen_and_torch_is_excluded(tree: Path, monkeypatch) -> None:
    build = run_spec(tree, monkeypatch)
    hidden = build.analysis["hiddenimports"]
    assert "rocmpanel.shell.cli" in hidden  # imported by name at run time
    assert "rocmpanel.workers.probe" not in hidden
    assert {"torch", "tkinter", "transformers"} <= set(build.analysis["excludes"])
    assert "numpy" not in build.analysis["excludes"]  # pyqtgraph needs it


def test_only_the_chosen_qt_translations_are_kept(tree: Path, monkeypatch) -> None:
    build = run_spec(tree, monkeypatch)
    kept = {name for name, *_ in build.collect["items"][-1]}
    assert "PySide6/Qt/translations/qtbase_zh_CN.qm" in kept
    assert "PySide6/Qt/translations/qtbase_de.qm" not in kept


def test_executables_per_platform(tree: Path, monkeypatch) -> None:
    names = spec_names()
    linux = run_spec(tree, monkeypatch, "linux")
    assert [(e["name"], e["console"], e["strip"]) for e in linux.exes] == [
        (names["cli"], True, False)  # strip breaks patchelf'd libraries (numpy.libs)
    ]
    assert linux.collect["name"] == names["app"]
    windows = run_spec(tree, monkeypatch, "win32")
    assert [(e["name"], e["console"]) for e in windows.exes] == [
        (names["cli"], True),
        (names["gui"], False),
    ]
    assert all(Path(e["icon"]).name == "rocmpanel.ico" and not e["strip"] for e in windows.exes)


def test_a_missing_qm_stops_the_build_with_the_fix(tree: Path, monkeypatch) -> None:
    (tree / QM).unlink()
    with pytest.raises(SystemExit, match=r"translations\.py build"):
        run_spec(tree, monkeypatch)


def test_runtime_hook_gives_children_the_users_library_path() -> None:
    hook = ROOT / "packaging" / "pyi_rth_rocmpanel_env.py"
    namespace: dict[str, Any] = {"__name__": "hook"}
    exec(compile(hook.read_text(encoding="utf-8"), str(hook), "exec"), namespace)
    restore = namespace["_restore"]
    env = {"LD_LIBRARY_PATH": "/b:/usr/lib/x", "LD_LIBRARY_PATH_ORIG": "/usr/lib/x"}
    restore(env, "/b")
    assert env == {"LD_LIBRARY_PATH": "/usr/lib/x"}
    env = {"LD_LIBRARY_PATH": "/b"}  # the user had none: none again
    restore(env, "/b")
    assert env == {}


@pytest.fixture
def frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """rocmpanel.workers as it is in a PyInstaller bundle at ``tmp_path/_internal``."""
    import rocmpanel.workers

    bundle = tmp_path / "_internal"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    yield importlib.reload(rocmpanel.workers), bundle
    monkeypatch.undo()
    importlib.reload(rocmpanel.workers)  # the real location again, for every later test


def test_worker_script_in_a_bundle_laid_out_by_the_spec(tree: Path, monkeypatch, frozen) -> None:
    workers, bundle = frozen
    for src, dest in run_spec(tree, monkeypatch).analysis["datas"]:
        (bundle / dest).mkdir(parents=True, exist_ok=True)
        shutil.copy(src, bundle / dest)
    script = workers.worker_script("probe")
    assert script == bundle / "rocmpanel" / "workers" / "probe.py"
    assert script.is_file()


def test_worker_script_outside_a_bundle_is_the_source_file() -> None:
    from rocmpanel.workers import worker_script

    assert worker_script("probe") == ROOT / "rocmpanel" / "workers" / "probe.py"
    assert worker_script("probe").is_file()
