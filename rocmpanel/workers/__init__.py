"""Scripts run inside the workload Python by path.

They import only the standard library, torch and transformers (and their sibling
``_wire.py``), never ``rocmpanel.*`` or Qt: the workload environment has none of those.
"""

from pathlib import Path

WORKERS_DIR = Path(__file__).resolve().parent


def worker_script(name: str) -> Path:
    """Path of the worker script ``name`` (without ``.py``)."""
    return WORKERS_DIR / f"{name}.py"
