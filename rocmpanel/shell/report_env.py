"""The environment variables a health report lists, and how it shows them.

The ROCm, HIP, HSA, PyTorch, RCCL... variables (by the catalogue of ``rocmpanel.envvars``
or by their prefix) and the PATH-like lists, which are shortened to their first entries.
A variable whose name looks like a secret is listed without its value. The panel's own
``ROCMPANEL_*`` variables are left out: they describe the panel, not the user's setup.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MAX_PATH_ENTRIES = 8
MAX_VALUE = 400  # characters of one value

#: Variables listed for their name's prefix even when the catalogue has no entry for them.
ENV_PREFIXES: tuple[str, ...] = (
    "ROCM", "HIP_", "HSA_", "HCC_", "AMD_", "GPU_", "PYTORCH_", "TORCH_", "MIOPEN_",
    "NCCL_", "RCCL_", "ROCBLAS_", "HIPBLASLT_", "TENSILE_", "OMP_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES", "TRANSFORMERS_", "HF_",
)  # fmt: skip
#: Lists of folders: shown shortened (a few entries, the rest counted).
PATH_LIKE: tuple[str, ...] = (
    "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "LIBRARY_PATH", "CPATH", "CMAKE_PREFIX_PATH",
    "PKG_CONFIG_PATH", "LD_PRELOAD",
)  # fmt: skip
#: A variable whose name contains one of these never has its value in a report.
SECRET_RE = re.compile(r"KEY|TOKEN|SECRET|PASS|AUTH|CREDENTIAL", re.IGNORECASE)
SECRET_LEFT_OUT = "(value left out: the name looks like a secret)"


@dataclass(frozen=True)
class EnvLine:
    """One environment variable as the report shows it (``note``: shortened, left out)."""

    name: str
    value: str
    note: str = ""


def _short(text: str, limit: int = MAX_VALUE) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


def _env_listed(name: str, known: Callable[[str], bool]) -> bool:
    upper = name.upper()
    if upper.startswith("ROCMPANEL_"):
        return False  # the panel's own (demo folders, test homes): not the user's setup
    return upper in PATH_LIKE or upper.startswith(ENV_PREFIXES) or known(name)


def shorten_list(value: str, separator: str) -> tuple[str, str]:
    """A PATH-like value cut to its first entries: (shown value, note)."""
    entries = [e for e in value.split(separator) if e]
    if len(entries) <= MAX_PATH_ENTRIES:
        return separator.join(entries), ""
    shown = separator.join(entries[:MAX_PATH_ENTRIES])
    return shown, f"shortened: first {MAX_PATH_ENTRIES} of {len(entries)} entries"


def env_lines(
    environ: Mapping[str, str], known: Callable[[str], bool], separator: str = os.pathsep
) -> list[EnvLine]:
    """The variables of ``environ`` a report lists, sorted; secrets without their value."""
    lines = []
    for name in sorted(environ):
        if not _env_listed(name, known):
            continue
        value = environ[name]
        if SECRET_RE.search(name):
            lines.append(EnvLine(name, "", SECRET_LEFT_OUT))
        elif name.upper() in PATH_LIKE:
            shown, note = shorten_list(value, separator)
            lines.append(EnvLine(name, _short(shown, 1000), note))
        else:
            lines.append(EnvLine(name, _short(value)))
    return lines


def catalogue_matcher() -> Callable[[str], bool]:
    from rocmpanel.envvars.catalogue import load_catalogue

    catalogue = load_catalogue()
    return lambda name: catalogue.lookup(name) is not None
