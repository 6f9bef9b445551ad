"""``rocmpanel presets`` and ``rocmpanel bench`` (shell/cli.py COMMANDS names this module):
the commands are in :mod:`~rocmpanel.tuning.presets_cli` and
:mod:`~rocmpanel.tuning.bench_cli`."""

from __future__ import annotations

from typing import Any

from rocmpanel.tuning import bench_cli, presets_cli


def register(subparsers: Any) -> None:
    presets_cli.register(subparsers)
    bench_cli.register(subparsers)
