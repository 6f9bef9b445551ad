"""Constants a worker must copy (it runs without rocmpanel) equal their panel-side home.

``tests/base/test_enums.py`` covers the enum copies in ``_wire.py``; this covers the copies
that live in the worker scripts themselves, read from their source (importing a worker
would run it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rocmpanel.machine import host_facts

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"


def _constant(script: str, name: str) -> object:
    tree = ast.parse((WORKERS / script).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    pytest.fail(f"{script} has no constant {name}")


def test_probe_reports_the_variables_the_checklist_judges() -> None:
    assert _constant("probe.py", "ENV_KEYS") == host_facts.ENV_KEYS
