"""Which of the chat's packages the workload Python has (:mod:`rocmpanel.jobs.installed`
asked for every distribution :mod:`rocmpanel.chat.requirements` names)."""

from __future__ import annotations

from rocmpanel.chat.requirements import distributions
from rocmpanel.jobs.installed import Installed
from rocmpanel.jobs.installed import read_installed as read_versions

__all__ = ["Installed", "read_installed"]


def read_installed(python: str) -> Installed:
    """The chat's distributions in ``python`` ("" = the panel's own). Blocking."""
    return read_versions(python, distributions())
