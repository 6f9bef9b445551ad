"""Limits and units of the Monitor have one declaration each: the sampling interval range
is MonitorSettings', byte units are base.units'."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rocmpanel.monitor
from rocmpanel.monitor import interval

MONITOR = Path(rocmpanel.monitor.__file__).parent
_BYTE_FIGURES = {1024, 1024**2, 1024**3}


def test_every_interval_limit_follows_the_settings_declaration() -> None:
    # Declare another range and load the Monitor against it: the history's tier, the
    # sampler's clamp and the toolbar's spin box all follow.
    code = textwrap.dedent(
        """
        import dataclasses, os
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from rocmpanel.base import settings
        real = settings.option_of
        def option_of(section, name):
            found = real(section, name)
            if name == "interval_ms":
                return dataclasses.replace(found, minimum=250, maximum=4000)
            return found
        settings.option_of = option_of
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from rocmpanel.monitor import history, sampler
        from rocmpanel.monitor.views.toolbar import MonitorToolbar
        spin = MonitorToolbar(500).interval_spin
        print(history.MIN_INTERVAL_S, history.SeriesHistory(["x"])._times.size,
              sampler.effective_interval(10, False), sampler.effective_interval(9000, False),
              spin.minimum(), spin.maximum())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0.25", "14400", "250", "4000", "250", "4000"]


def test_an_undeclared_interval_range_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    real = interval.option_of
    open_range = dataclasses.replace(real(interval.MonitorSettings, "interval_ms"), maximum=None)
    monkeypatch.setattr(interval, "option_of", lambda section, name: open_range)
    with pytest.raises(TypeError, match="interval_ms"):
        interval._declared_range_ms()


def _byte_figures(tree: ast.AST) -> list[int]:
    """Lines that spell a byte unit out (1024, 1024**2, 2**20, 2**30...)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in _BYTE_FIGURES:
            if not isinstance(node.value, bool):
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Pow)
            and isinstance(node.left, ast.Constant)
            and node.left.value in (2, 1024)
        ):
            lines.append(node.lineno)
    return lines


def test_byte_units_come_from_base_units() -> None:
    found = {
        str(path.relative_to(MONITOR)): lines
        for path in sorted(MONITOR.rglob("*.py"))
        if (lines := _byte_figures(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
