"""The chat worker's commands and answers as typed records (the worker itself is stdlib).

The panel builds a :class:`LoadRequest` or :class:`GenerateRequest` and sends
``request.op, **request.fields()`` through an interactive job. The worker answers a load or
an unload with a result event (``kind`` ``loaded``/``unloaded``), streams a reply as token
events and ends it with a reply event, both carrying the request id
(:class:`rocmpanel.jobs.protocol.Token`, :class:`rocmpanel.jobs.protocol.ReplyDone`).
Every sampling value is sent explicitly; their defaults and ranges are declared once, in
:class:`rocmpanel.base.settings.ChatSettings`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.i18n import translate
from rocmpanel.base.settings import ChatSettings
from rocmpanel.base.units import format_gib
from rocmpanel.chat.memory_estimate import SMALLER, and_list
from rocmpanel.chat.store import ReplyFigures
from rocmpanel.jobs.job_env import result_preset
from rocmpanel.jobs.protocol import ReplyDone

WORKER = "chat"
ALLOW_HUB_ARG = "--allow-hub"


@dataclass(frozen=True)
class Sampling:
    """How the next token is picked. ``temperature`` 0 means greedy; ``seed`` -1: random."""

    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float
    max_new_tokens: int
    seed: int

    @classmethod
    def from_settings(cls, chat: ChatSettings, **changes: Any) -> Sampling:
        """The sampling values of ``chat`` (the user's settings), with ``changes``."""
        sampling = cls(
            temperature=chat.temperature,
            top_p=chat.top_p,
            top_k=chat.top_k,
            repetition_penalty=chat.repetition_penalty,
            max_new_tokens=chat.max_new_tokens,
            seed=chat.seed,
        )
        return dataclasses.replace(sampling, **changes) if changes else sampling

    @classmethod
    def declared(cls, **changes: Any) -> Sampling:
        """The declared defaults (``ChatSettings``), with ``changes``."""
        return cls.from_settings(ChatSettings(), **changes)


@dataclass(frozen=True)
class LoadRequest:
    """Load a model folder at a precision on a device (auto, GPU or CPU)."""

    path: str
    precision: Precision
    device: Device
    context_length: int
    trust_remote_code: bool = False

    op: ClassVar[str] = "load"

    def fields(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "precision": self.precision.value,
            "device": self.device.value,
            "context_length": self.context_length,
            "trust_remote_code": self.trust_remote_code,
        }

    def smaller(self) -> LoadRequest:
        """The same load with less precision or, at the smallest, half the context: what to
        offer after an out-of-memory or a killed worker."""
        precision, context = smaller_setting(self.precision, self.context_length)
        return dataclasses.replace(self, precision=precision, context_length=context)


@dataclass(frozen=True)
class GenerateRequest:
    """One reply to ``messages`` (role/content pairs, oldest first)."""

    id: int
    messages: tuple[tuple[str, str], ...]
    system: str
    sampling: Sampling

    op: ClassVar[str] = "generate"

    def fields(self) -> dict[str, Any]:
        s = self.sampling
        return {
            "id": self.id,
            "messages": [{"role": r, "content": c} for r, c in self.messages],
            "system": self.system,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "top_k": s.top_k,
            "repetition_penalty": s.repetition_penalty,
            "max_new_tokens": s.max_new_tokens,
            "seed": s.seed if s.seed >= 0 else None,
        }


def _opt_int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


@dataclass(frozen=True)
class GpuShare:
    """One GPU a loaded model is on: ``index`` in the job's numbering (cuda:0 is the first
    chosen GPU), its PCI slot and name, the bytes torch had allocated there after the load,
    and the decoder layers it holds (inclusive ranges)."""

    index: int
    bdf: str | None
    name: str
    bytes: int | None
    layers: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, data: object) -> GpuShare | None:
        """One entry of the ``gpus`` list of a ``loaded`` result; None when it is garbled."""
        if not isinstance(data, Mapping):
            return None
        index = _opt_int(data, "index")
        if index is None or index < 0:
            return None
        bdf = data.get("bdf")
        layers: list[tuple[int, int]] = []
        raw_layers = data.get("layers")
        for pair in raw_layers if isinstance(raw_layers, list) else []:
            if (
                isinstance(pair, list)
                and len(pair) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)
            ):
                layers.append((pair[0], pair[1]))
        return cls(
            index=index,
            bdf=str(bdf).lower() if isinstance(bdf, str) and bdf else None,
            name=str(data.get("name") or ""),
            bytes=_opt_int(data, "bytes"),
            layers=tuple(layers),
        )

    def layers_text(self) -> str:
        """``0-15`` (or ``0-3, 8-11`` for a GPU holding two runs); "" when not reported."""
        return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in self.layers)


@dataclass(frozen=True)
class LoadedModel:
    """What the worker reported after a load (``bdf``: its GPU's PCI slot, when known).

    ``shares``: each GPU the model is on (several when it was spread); ``split`` the
    worker's own one-line summary of the layers' placement. Workers from before the spread
    send neither: then ``shares`` is empty and the model counts as on one device."""

    path: str
    precision: Precision
    device: Device
    device_name: str
    bdf: str | None
    parameters: int | None
    context_length: int
    load_s: float | None
    memory_bytes: int | None
    memory_kind: str
    preset: str | None = None  # the name of the tuning preset the model runs under
    shares: tuple[GpuShare, ...] = ()
    split: str = ""

    @classmethod
    def from_result(cls, data: Mapping[str, Any], requested: LoadRequest) -> LoadedModel:
        """Read a ``loaded`` result; what it lacks or garbles is taken from ``requested``."""
        try:
            precision = Precision(str(data.get("precision")))
        except ValueError:
            precision = requested.precision
        try:
            device = Device.parse(data.get("device"))
        except ValueError:
            device = requested.device
        load_s = data.get("load_s")
        bdf = data.get("bdf")
        return cls(
            path=str(data.get("path") or requested.path),
            precision=precision,
            device=device,
            device_name=str(data.get("device_name", "")),
            bdf=str(bdf).lower() if isinstance(bdf, str) and bdf else None,
            parameters=_opt_int(data, "parameters"),
            context_length=_opt_int(data, "context_length") or 0,
            load_s=float(load_s) if isinstance(load_s, (int, float)) else None,
            memory_bytes=_opt_int(data, "memory_bytes"),
            memory_kind=str(data.get("memory_kind", "")),
            preset=result_preset(data),
            shares=_shares(data.get("gpus")),
            split=str(data.get("split") or ""),
        )

    @property
    def on_gpu(self) -> bool:
        return self.device is Device.GPU

    @property
    def gpus(self) -> tuple[int, ...]:
        """The GPUs the model is on, in the job's numbering."""
        return tuple(share.index for share in self.shares)

    @property
    def per_gpu_bytes(self) -> tuple[int | None, ...]:
        return tuple(share.bytes for share in self.shares)

    @property
    def spread(self) -> bool:
        """Whether the model is spread over several GPUs."""
        return len(self.shares) > 1

    @property
    def bdfs(self) -> tuple[str, ...]:
        """The PCI slots of every GPU it is on (those torch reported)."""
        return tuple(share.bdf for share in self.shares if share.bdf)

    def placement_text(self) -> str:
        """``Spread over GPU 0 and GPU 1 (layers 0-15 / 16-31), 9.1 + 8.7 GiB``; "" when
        the model is on one device. GPU numbers are the job's (cuda:0 is the first GPU of
        the choice); per-GPU figures are what torch had allocated right after the load."""
        if not self.spread:
            return ""
        names = and_list([f"GPU {share.index}" for share in self.shares])
        text = translate("LoadedModel", "Spread over {gpus}").format(gpus=names)
        layers = [share.layers_text() for share in self.shares]
        if all(layers):
            text += translate("LoadedModel", " (layers {layers})").format(layers=" / ".join(layers))
        if all(b is not None for b in self.per_gpu_bytes):
            figures = [format_gib(b).removesuffix(" GiB") for b in self.per_gpu_bytes]
            text += f", {' + '.join(figures)} GiB"
        return text


def _shares(data: object) -> tuple[GpuShare, ...]:
    """The ``gpus`` list of a ``loaded`` result, garbled entries left out."""
    if not isinstance(data, list):
        return ()
    parsed = (GpuShare.parse(item) for item in data)
    return tuple(share for share in parsed if share is not None)


@dataclass(frozen=True)
class Reply:
    """A finished reply to request ``id``: its full text and figures."""

    id: int | None
    text: str
    figures: ReplyFigures
    finish: str

    @classmethod
    def from_done(cls, done: ReplyDone) -> Reply:
        return cls(
            id=done.request_id,
            text=done.text,
            figures=ReplyFigures.from_dict(done.data),
            finish=str(done.data.get("finish", "")),
        )


def result_kind(data: Mapping[str, Any]) -> str:
    return str(data.get("kind", ""))


def smaller_setting(precision: Precision, context_length: int) -> tuple[Precision, int]:
    """What to offer after an out-of-memory or a killed worker: less precision or context."""
    smaller = SMALLER.get(precision)
    if smaller is not None:
        return smaller, context_length
    return precision, max(512, context_length // 2)
