"""Report the installed versions of the distributions named on the command line.

Run in the workload Python by path (``python packages.py torch transformers ...``); stdlib
only. It reads each distribution's metadata with ``importlib.metadata`` and never imports
the package itself, so it takes a fraction of a second even where importing torch takes
many (https://docs.python.org/3/library/importlib.metadata.html#distribution-versions).
One ``result`` event: ``{"kind": "packages", "python": ..., "python_version": ...,
"versions": {name: version or null}}``; a name not installed is null.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata

import _wire


def installed_versions(names: list[str]) -> dict[str, str | None]:
    """Each name's installed version, or None when no distribution of that name is found."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def main() -> None:
    _wire.result(
        {
            "kind": "packages",
            "python": sys.executable,
            "python_version": platform.python_version(),
            "versions": installed_versions(sys.argv[1:]),
        }
    )


if __name__ == "__main__":
    _wire.run_main(main)
