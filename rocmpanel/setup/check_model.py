"""The checklist's records: what was found about a host, and each item's verdict and fix.

A fact that is not known is None, and the item about it is ``skip``, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class HostFacts:
    """What was found about the host; None = not known (captured text, other OS)."""

    kfd_present: bool | None = None
    kfd_rw: bool | None = None
    kfd_error: str | None = None  # e.g. "Permission denied" (rocminfo's words)
    render_nodes: tuple[str, ...] | None = None
    render_rw: bool | None = None
    user: str | None = None
    process_groups: frozenset[str] | None = None  # groups this login session has
    member_groups: frozenset[str] | None = None  # groups /etc/group lists the user in
    existing_groups: frozenset[str] = frozenset({"render", "video"})
    amdgpu_loaded: bool | None = None
    rocm_installs: tuple[str, ...] | None = None
    rocm_path_valid: bool | None = None
    wsl: bool = False
    hsa_status: str | None = None  # rocminfo's HSA_STATUS_ERROR_*, if any
    env: Mapping[str, str] = field(default_factory=dict)
