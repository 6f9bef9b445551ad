"""DESIGN.md's rules about torch and Qt, checked on the source and on real processes (the
layout's import rules are in test_import_rules.py)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rocmpanel"
WORKER_ALLOWED = {
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "accelerate",
    "bitsandbytes",
    "numpy",
    "_wire",
    "huggingface_hub",
    # the HTTP server of the chat worker (workers/_serve_*.py), imported only when serving
    "fastapi",
    "starlette",
    "uvicorn",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_nothing_outside_workers_imports_torch() -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "workers" not in path.parts
        and any(n.split(".")[0] in ("torch", "transformers") for n in _imports(path))
    ]
    assert not offenders


def test_workers_import_only_stdlib_torch_and_transformers() -> None:
    offenders = []
    for path in (PACKAGE / "workers").glob("*.py"):
        if path.name == "__init__.py":
            continue
        for name in _imports(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in WORKER_ALLOWED or top == "__future__":
                continue
            if top.startswith("_") and (PACKAGE / "workers" / f"{top}.py").is_file():
                continue  # a private sibling helper of the workers (e.g. _wire)
            offenders.append(f"{path.name}: {name}")
    assert not offenders


def test_import_rocmpanel_imports_neither_qt_nor_torch() -> None:
    code = (
        "import sys, json, rocmpanel, rocmpanel.shell.cli; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('PySide6', 'torch', 'pyqtgraph', 'numpy'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_starting_the_app_does_not_import_torch() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-m", "rocmpanel", "--smoke-test"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["torch_imported"] is False
    assert report["first_paint_ms"] > 0
    assert isinstance(report["tabs"], list)


def test_every_package_folder_is_installed() -> None:
    """pyproject lists the packages by hand: a folder missing there works in an editable
    install and is absent from a wheel."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    folders = {
        ".".join(p.parent.relative_to(PACKAGE.parent).parts)
        for p in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert folders <= listed, sorted(folders - listed)
