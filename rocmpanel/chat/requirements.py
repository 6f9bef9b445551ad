"""What the chat worker needs installed in the workload Python, stated once, and checked.

:data:`REQUIREMENTS` is the table: each distribution the worker imports (directly, or through
transformers for a precision), the lowest version it works with and why. :func:`missing_for`
compares it with what ``workers/packages.py`` found (installed versions, read with
``importlib.metadata`` without importing anything); :func:`describe_missing` says it in
plain words with the fix. The Chat tab shows that before a load, and explains a load that
failed on an import the same way.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.i18n import translate

TORCH = "torch"
INSTALL_PROFILE = "llm"  # the install profile that brings the chat's packages (not torch)


@dataclass(frozen=True)
class Requirement:
    """A distribution the chat needs, from ``minimum`` on (None: any version)."""

    name: str
    minimum: str | None
    why: str
    precisions: frozenset[Precision] = frozenset(Precision)
    devices: frozenset[Device] = frozenset((Device.GPU, Device.CPU))


QUANTIZED = frozenset((Precision.NF4, Precision.INT8))
ON_GPU, ON_CPU = frozenset({Device.GPU}), frozenset({Device.CPU})
BNB_WHY = "4-bit and 8-bit weights"

REQUIREMENTS: tuple[Requirement, ...] = (
    Requirement(TORCH, None, "runs the model"),
    # The project's `workload` extra (pyproject.toml) and the "llm" install profile
    # (resources/install_profiles.yaml) ask for 4.45, which has every API the worker uses
    # (apply_chat_template(return_dict=True); `dtype=` from 4.56 is chosen at run time).
    Requirement("transformers", "4.45", "loads the model and its chat template"),
    # transformers 5 needs 1.1.0 (its dependency_versions_table.py).
    Requirement("accelerate", "1.1.0", "places the weights (device_map)"),
    Requirement("safetensors", None, "reads the weights (safetensors only)"),
    Requirement("tokenizers", None, "the fast tokenizer"),
    # On a GPU: ROCm wheels on PyPI from 0.49 (FACTS.md §3), but 0.49.2's ROCm 4-bit GEMV
    # gives wrong output and 0.50 is the first with the complete ROCm 4-bit path
    # (unslothai/unsloth#7535, as the "llm" install profile records; AMD support official
    # in https://huggingface.co/docs/bitsandbytes/v0.50.2/en/installation.md). On the CPU:
    # 4-bit from 0.47 (FACTS.md §3).
    Requirement("bitsandbytes", "0.50", BNB_WHY, QUANTIZED, ON_GPU),
    Requirement("bitsandbytes", "0.47", BNB_WHY, QUANTIZED, ON_CPU),
)


# Serving the loaded model over HTTP (issue 15) is optional: the chat works without these,
# so they are checked apart (:func:`missing_for_serve`). Floors and their sources: the "llm"
# install profile (resources/install_profiles.yaml, fastapi_0_110 and uvicorn_0_22).
SERVE_REQUIREMENTS: tuple[Requirement, ...] = (
    Requirement("fastapi", "0.110", "the OpenAI-compatible HTTP API"),
    Requirement("uvicorn", "0.29", "runs the HTTP API in the chat worker"),
)


def distributions() -> tuple[str, ...]:
    """Every distribution named in both tables, once, in table order (what to ask about:
    one read of ``workers/packages.py`` answers the chat's and the server's needs)."""
    return tuple(dict.fromkeys(r.name for r in (*REQUIREMENTS, *SERVE_REQUIREMENTS)))


def version_tuple(text: str) -> tuple[int, ...]:
    """The leading numbers of a version ("2.13.0+cpu" → (2, 13, 0); "0.50.0.dev1" → (0, 50, 0))."""
    numbers: list[int] = []
    for piece in text.split("+", 1)[0].split("."):
        match = re.match(r"\d+", piece)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(piece):  # "0rc1": the numbers end here
            break
    return tuple(numbers)


@dataclass(frozen=True)
class Missing:
    """A requirement the workload Python does not meet: absent, or older than needed."""

    name: str
    minimum: str | None
    installed: str | None  # None: not installed

    def describe(self) -> str:
        if self.installed is None:
            return self.name
        return translate("requirements", "{name} {installed} (needs {minimum} or newer)").format(
            name=self.name, installed=self.installed, minimum=self.minimum
        )


def _unmet(versions: Mapping[str, str | None], req: Requirement) -> Missing | None:
    installed = versions.get(req.name)
    if installed is None:
        return Missing(req.name, req.minimum, None)
    if req.minimum and version_tuple(installed) < version_tuple(req.minimum):
        return Missing(req.name, req.minimum, installed)
    return None


def missing_for(
    versions: Mapping[str, str | None], precision: Precision, device: Device
) -> tuple[Missing, ...]:
    """The requirements of ``precision`` on ``device`` (GPU or CPU) that ``versions`` (name →
    installed version or None) does not meet, in table order."""
    found = (
        _unmet(versions, req)
        for req in REQUIREMENTS
        if precision in req.precisions and device in req.devices
    )
    return tuple(m for m in found if m is not None)


def missing_for_serve(versions: Mapping[str, str | None]) -> tuple[Missing, ...]:
    """What serving the loaded model needs beyond the chat (fastapi, uvicorn) and
    ``versions`` lacks; :func:`describe_missing` words it with the same fix."""
    found = (_unmet(versions, req) for req in SERVE_REQUIREMENTS)
    return tuple(m for m in found if m is not None)


def describe_missing(
    missing: tuple[Missing, ...],
    *,
    gui: bool = True,
    can_install: bool = True,
    python: str = "",
) -> str:
    """What is missing and the fix, in a sentence or two ("" when nothing is missing).

    torch comes from the PyTorch tab's plan (the build must match the GPU); the others from
    the "PyTorch + local LLM" install profile, through the Chat tab's "Install missing
    packages" button (``can_install``: the panel offers it). ``gui`` False: the CLI's words,
    with ``python`` (the workload interpreter) running pip when it is given."""
    if not missing:
        return ""
    torch = [m for m in missing if m.name == TORCH]
    others = [m for m in missing if m.name != TORCH]
    parts: list[str] = []
    # The CLI's words stay English (a headless command shows no translation anyway).
    if torch and gui:
        parts.append(
            translate(
                "requirements",
                "PyTorch is not installed in the workload Python: install PyTorch from the "
                "PyTorch tab (its plan picks the build for this GPU).",
            )
        )
    elif torch:
        parts.append(
            "PyTorch is not installed in the workload Python: rocmpanel torch plan shows the "
            "build for this GPU, and rocmpanel torch install installs it."
        )
    if others:
        names = ", ".join(m.describe() for m in others)
        if gui:
            if can_install:
                fix = translate("requirements", "The install button below installs them.")
            else:
                fix = translate("requirements", "Install them into the workload Python.")
            lacks = (
                translate("requirements", "It also lacks {names}. {fix}")
                if torch
                else translate("requirements", "The workload Python lacks {names}. {fix}")
            )
            parts.append(lacks.format(names=names, fix=fix))
        else:
            pip = f"{shlex.quote(python)} -m pip" if python else "pip"
            fix = f"Install them: {pip} install -U " + " ".join(m.name for m in others) + "."
            lacks = "It also lacks" if torch else "The workload Python lacks"
            parts.append(f"{lacks} {names}. {fix}")
    if len(parts) == 2 and gui:  # two sentences, joined as the language joins them
        return translate("requirements", "{first} {second}").format(first=parts[0], second=parts[1])
    return " ".join(parts)
