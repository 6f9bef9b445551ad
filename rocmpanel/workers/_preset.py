"""The tuning preset a worker runs under (stdlib only; imported by sibling workers).

CONTRACT (filled in by the apply work; signatures fixed): the panel puts the preset's
environment variables in the job's environment and a JSON header in ROCMPANEL_PRESET:
{"id": ..., "name": ..., "torch": {key: value}} (keys: rocmpanel/jobs/presets.py
TORCH_SETTINGS). A worker calls ``before_torch()`` before it imports torch and
``after_torch(torch)`` right after.
"""

from __future__ import annotations

from typing import Any

HEADER_VAR = "ROCMPANEL_PRESET"


def before_torch() -> dict[str, Any] | None:
    """Read the header; set what must be in os.environ before torch starts (the
    allocator variable the installed torch reads, TunableOp's variables and results
    file). Returns the header, or None without one (or with a bad one: logged)."""
    raise NotImplementedError


def after_torch(torch: Any) -> list[dict[str, Any]]:
    """Apply the header's torch runtime settings; one record per setting:
    {"key": ..., "value": ..., "applied": bool, "note": "why not / what it did"}."""
    raise NotImplementedError


def summary() -> dict[str, Any] | None:
    """{"id", "name"} of the preset this worker runs under, or None."""
    raise NotImplementedError
