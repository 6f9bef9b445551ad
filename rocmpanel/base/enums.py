"""The small vocabularies several features share, each declared once.

Workers cannot import rocmpanel, so ``workers/_wire.py`` keeps plain-string copies of the
values a worker sends or receives; ``tests/base/test_enums.py`` checks that the copies match.
"""

from __future__ import annotations

from enum import Enum

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP


class CheckStatus(str, Enum):
    """The verdict of one check (Setup's checklist, PyTorch's validation suite)."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"

    @classmethod
    def parse(cls, value: object) -> CheckStatus:
        """A status from text a worker or an old record wrote; unknown text is a failure."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.FAIL


class Precision(str, Enum):
    """How a model's weights are held in memory."""

    NF4 = "nf4"
    INT8 = "int8"
    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"

    @property
    def label(self) -> str:
        return _PRECISION_LABELS[self]

    @property
    def weight_bytes_per_param(self) -> float:
        # NF4: half a byte plus one fp32 absmax per 64-weight block (double quantization
        # would shave a little more); int8: one byte plus a per-row scale.
        return _WEIGHT_BYTES[self]

    @property
    def quantized(self) -> bool:
        return self in (Precision.NF4, Precision.INT8)

    @property
    def compute_bytes(self) -> int:
        """Bytes per value of activations and KV cache."""
        return 4 if self is Precision.FP32 else 2


_PRECISION_LABELS = {
    # Shown through translate("Precision", label) in the window.
    Precision.NF4: QT_TRANSLATE_NOOP("Precision", "4-bit NF4 (bitsandbytes)"),
    Precision.INT8: QT_TRANSLATE_NOOP("Precision", "8-bit (bitsandbytes)"),
    Precision.FP16: "float16",
    Precision.BF16: "bfloat16",
    Precision.FP32: "float32",
}
_WEIGHT_BYTES = {
    Precision.NF4: 0.5 + 4 / 64,
    Precision.INT8: 1.0 + 0.01,
    Precision.FP16: 2.0,
    Precision.BF16: 2.0,
    Precision.FP32: 4.0,
}


class Device(str, Enum):
    """Where GPU work runs: the user's choice (AUTO, GPU, CPU) or the resolved place."""

    AUTO = "auto"
    GPU = "gpu"
    CPU = "cpu"

    @classmethod
    def parse(cls, value: object) -> Device:
        """``auto``/``gpu``/``cpu``; ``cuda`` (torch's name, older settings files) is GPU."""
        text = str(value).strip().lower()
        if text == "cuda":
            return cls.GPU
        return cls(text)

    @property
    def torch_name(self) -> str:
        """The device string a worker hands to torch ("cuda" on ROCm too)."""
        return "cpu" if self is Device.CPU else "cuda"

    @property
    def memory_name(self) -> str:
        """What this device's memory is called in messages."""
        return "RAM" if self is Device.CPU else "VRAM"


class Language(str, Enum):
    """The window's language: the system's (when a translation for it exists) or a fixed one."""

    SYSTEM = "system"
    ENGLISH = "en"
    CHINESE_SIMPLIFIED = "zh_CN"


class Theme(str, Enum):
    """The window's colours: the system's light or dark scheme, or a fixed one."""

    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"
