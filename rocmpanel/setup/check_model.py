"""The checklist's records: what was found about a host, and each item's verdict and fix.

A fact that is not known is None, and the item about it is ``skip``, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class CheckStatus(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


class FixKind(str, Enum):
    ENV_SET = "env_set"
    ENV_UNSET = "env_unset"
    COMMAND = "command"  # shown and copied, never run by the panel
    ADVICE = "advice"


@dataclass(frozen=True)
class Fix:
    """How to fix an item. For env fixes ``name``/``value``; for commands ``text``."""

    kind: FixKind
    text: str
    name: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    status: CheckStatus
    message: str
    fix: Fix | None = None
