"""Coercing values read from the panel's YAML data files into the types the loaders want."""

from __future__ import annotations

from typing import Any


def strings(value: Any) -> tuple[str, ...]:
    """None -> (), "a" -> ("a",), a list -> its items as text; TypeError for anything else
    (a mapping or a number where the file should hold a list)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    raise TypeError(f"expected a list of strings, not {type(value).__name__}")
