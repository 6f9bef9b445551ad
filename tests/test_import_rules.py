"""The layout's import rules (DESIGN.md, "Layout"), read from the AST of every module.

- a feature imports ``gui jobs envvars machine base`` and never another feature;
- ``gui`` imports ``jobs envvars machine base`` only (no feature, no ``shell``);
- ``jobs envvars machine base`` never import a feature, ``gui`` or ``shell`` (their own
  ``views/``, such as the environment editor, may import ``gui``);
- only ``views/``, ``gui/`` and ``shell/`` import QtWidgets (or pyqtgraph, which needs it);
- ``knowledge`` (the data sets and the one kernel decision) imports ``machine base`` only,
  and ``machine base`` never import ``knowledge``;
- ``workers/`` import nothing of rocmpanel.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rocmpanel"
FEATURES = ("setup", "monitor", "pytorch", "tuning", "chat", "multigpu")
SHARED = ("gui", "jobs", "envvars", "knowledge", "machine", "base")
WIDGET_FOLDERS = ("views", "gui", "shell")
# The lowest shared layers, and all they may import of rocmpanel (besides themselves).
_LAYER_MAY_IMPORT = {"knowledge": {"machine", "base"}, "machine": {"base"}, "base": set()}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _imported(path: Path, package_dir: Path) -> set[str]:
    """Every absolute module name ``path`` imports, relative imports resolved."""
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    package = parts[:-1]  # for __init__ too: level 1 is the package itself
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _rocmpanel_folders(names: set[str]) -> set[str]:
    return {n.split(".")[1] for n in names if n.startswith("rocmpanel.") and n.count(".") >= 1}


def violations(path: Path, package_dir: Path = PACKAGE) -> list[str]:
    """The import rules ``path`` breaks, as readable lines."""
    rel = path.relative_to(package_dir)
    folder = rel.parts[0] if len(rel.parts) > 1 else ""
    names = _imported(path, package_dir)
    used = _rocmpanel_folders(names)
    found: list[str] = []
    if folder in FEATURES:
        found += [f"{rel}: feature imports feature {u}" for u in used & set(FEATURES) - {folder}]
        found += [f"{rel}: feature imports shell" for u in used if u == "shell"]
    elif folder == "gui":
        found += [f"{rel}: gui imports {u}" for u in used if u in FEATURES or u == "shell"]
    elif folder in SHARED:
        banned = ("shell",) if "views" in rel.parts else ("gui", "shell")
        found += [f"{rel}: {folder} imports {u}" for u in used if u in FEATURES or u in banned]
        allowed = _LAYER_MAY_IMPORT.get(folder)
        if allowed is not None:
            found += [f"{rel}: {folder} imports {u}" for u in used - allowed - {folder}]
    elif folder == "workers":
        found += [f"{rel}: worker imports {n}" for n in names if n.split(".")[0] == "rocmpanel"]
    if not (set(rel.parts[:-1]) & set(WIDGET_FOLDERS)):
        for n in names:
            if "QtWidgets" in n.split(".") or n.split(".")[0] == "pyqtgraph":
                found.append(f"{rel}: imports {n} outside views/ gui/ shell/")
    return sorted(set(found))


def test_every_module_keeps_the_import_rules() -> None:
    offenders = [line for path in _modules() for line in violations(path)]
    assert offenders == []


def test_the_package_has_the_designed_folders() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders >= {"shell", "setup", "monitor", "pytorch", "chat", *SHARED, "workers"}
    assert folders <= {"shell", *FEATURES, *SHARED, "workers"}


@pytest.mark.parametrize(
    ("where", "source", "broken"),
    [
        ("chat/x.py", "from rocmpanel.pytorch.plan import plan\n", "feature imports feature"),
        ("chat/x.py", "from ..setup import compat\n", "feature imports feature"),
        ("machine/x.py", "import rocmpanel.gui.context\n", "machine imports gui"),
        (
            "machine/x.py",
            "from rocmpanel.knowledge import compat_data\n",
            "machine imports knowledge",
        ),
        (
            "knowledge/x.py",
            "from rocmpanel.envvars import catalogue\n",
            "knowledge imports envvars",
        ),
        ("envvars/x.py", "from rocmpanel.gui import report\n", "envvars imports gui"),
        ("envvars/views/x.py", "from rocmpanel.setup import tab\n", "envvars imports setup"),
        ("base/x.py", "from rocmpanel.shell import app\n", "base imports shell"),
        ("gui/x.py", "from rocmpanel.monitor import sample\n", "gui imports monitor"),
        ("jobs/x.py", "from PySide6.QtWidgets import QLabel\n", "outside views/"),
        ("monitor/x.py", "import pyqtgraph\n", "outside views/"),
        ("workers/x.py", "from rocmpanel.base import paths\n", "worker imports"),
    ],
)
def test_the_rule_checker_catches_each_kind_of_break(
    tmp_path: Path, where: str, source: str, broken: str
) -> None:
    fake = tmp_path / "rocmpanel"
    (fake / where).parent.mkdir(parents=True)
    (fake / where).write_text(source, encoding="utf-8")
    assert any(broken in line for line in violations(fake / where, fake))


def test_views_may_import_widgets_and_their_own_feature(tmp_path: Path) -> None:
    fake = tmp_path / "rocmpanel"
    view = fake / "chat" / "views" / "x.py"
    view.parent.mkdir(parents=True)
    view.write_text(
        "from PySide6.QtWidgets import QLabel\nfrom rocmpanel.chat import store\n"
        "from rocmpanel.gui.context import AppContext\n",
        encoding="utf-8",
    )
    assert violations(view, fake) == []
