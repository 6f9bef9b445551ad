"""Tiny pure-Python wheels standing in for real packages (torch, accelerate...): pip's
install mechanics are the same, and no network is needed. Tests get :func:`tiny_wheel`
through the ``tiny_wheel`` fixture (tests/conftest.py)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def tiny_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A valid wheel of ``name`` ``version`` depending on ``requires``; its module reports
    the version as ``VERSION`` and ``__version__``."""
    dist = f"{name}-{version}"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        f"{name}/__init__.py": f"VERSION = __version__ = {version!r}\n",
        f"{dist}.dist-info/METADATA": meta,
        f"{dist}.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: rocmpanel-tests\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{dist}.dist-info/RECORD"] = "\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, text in files.items():
            zf.writestr(member, text)
    return wheel
