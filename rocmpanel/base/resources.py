"""The data files shipped in resources/ (installed as the package ``rocmpanel.resources``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def resource_path(name: str) -> Path:
    """Path of a shipped data file (works for editable and regular installs)."""
    try:
        return Path(str(resources.files("rocmpanel.resources").joinpath(name)))
    except ModuleNotFoundError:
        # A source checkout that was never installed: resources/ sits next to the package.
        return Path(__file__).resolve().parents[2] / "resources" / name


def read_resource(name: str) -> str:
    """The text of a shipped data file; OSError when it is missing."""
    return resource_path(name).read_text(encoding="utf-8")
