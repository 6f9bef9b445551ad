"""Scripts run inside the workload Python by path.

They import only the standard library, torch and transformers (and their sibling
``_wire.py``), never ``rocmpanel.*`` or Qt: the workload environment has none of those.
"""

import sys
from pathlib import Path


def _workers_dir() -> Path:
    # In a PyInstaller build this package is compiled into the archive and __file__ names
    # no real file; the spec (packaging/rocmpanel.spec) ships the scripts as plain files
    # under <bundle>/rocmpanel/workers/, where another interpreter can run them.
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        return Path(bundle) / "rocmpanel" / "workers"
    return Path(__file__).resolve().parent


WORKERS_DIR = _workers_dir()


def worker_script(name: str) -> Path:
    """Path of the worker script ``name`` (without ``.py``)."""
    return WORKERS_DIR / f"{name}.py"
