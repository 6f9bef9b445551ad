"""Coercing values read from the panel's YAML data files into the types the loaders want."""

from __future__ import annotations

from typing import Any


def strings(value: Any) -> tuple[str, ...]:
    """None -> (), "a" -> ("a",), a list -> its items as text."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)
