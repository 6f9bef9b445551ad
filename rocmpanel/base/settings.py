"""Every user setting, declared once: sections as dataclasses, each option with its type,
default, range, label and help, and the YAML file that keeps them.

Code reads typed values (``settings.chat.temperature`` is a float) and widgets take their
limits from the declaration (``option_of(ChatSettings, "temperature").maximum``). Assigning
a value checks it against its declaration and raises ValueError when it does not fit.

The file stays flat (``chat_temperature: 0.7``): each option names its key, so files
written by earlier versions keep working. Unknown keys are kept (a newer version may have
written them); values of the wrong type fall back to the default and are reported in
``Settings.problems``.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Option:
    """How one setting is stored and shown: its key in the file, label, help and range."""

    key: str
    label: str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    visible: bool = True  # False: kept by the program itself, not shown in the Settings dialog


def option(
    default: Any,
    key: str,
    label: str,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    visible: bool = True,
) -> Any:
    """A dataclass field carrying its :class:`Option` (the one place a default is set)."""
    meta = Option(key, label, help, minimum, maximum, visible)
    return field(default=default, metadata={"option": meta})


class Section:
    """Base of the settings sections: assignments are checked against the declarations."""

    title: ClassVar[str] = ""

    def __setattr__(self, name: str, value: Any) -> None:
        spec = _fields(type(self)).get(name)
        # The declared default was checked once (in _fields): the dataclass __init__ that
        # assigns it to every field of every section need not check it again.
        if spec is not None and value is not spec[2]:
            value = _coerce(spec[0], spec[1], value)
        object.__setattr__(self, name, value)


# Per section class: each declared option's name -> (declaration, resolved type, default).
_FIELDS: dict[type, dict[str, tuple[Option, Any, Any]]] = {}


def _resolve(annotation: Any, cls: type) -> Any:
    """A field's type from its annotation (a string here, as the module postpones them).

    Evaluated in the class's module, as ``typing.get_type_hints`` would, without its cost
    (it walks the MRO and compiles a ForwardRef for every annotation of every base)."""
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, vars(sys.modules[cls.__module__]))  # our own declarations, not input


def _fields(cls: type) -> dict[str, tuple[Option, Any, Any]]:
    """Each declared option of a section class with its resolved type and its checked
    default (computed once per class)."""
    found = _FIELDS.get(cls)
    if found is None:
        found = {}
        for f in dataclasses.fields(cls):
            opt = f.metadata.get("option")
            if opt is None:
                continue
            hint = _resolve(f.type, cls)
            default = f.default
            checked = _coerce(opt, hint, default)  # raises on a declaration bug
            if type(checked) is not type(default) or checked != default:
                raise TypeError(f"setting {opt.key} has a default of another type")
            found[f.name] = (opt, hint, default)
        _FIELDS[cls] = found
    return found


def _coerce(opt: Option, hint: Any, value: Any) -> Any:
    """``value`` as the declared type, inside the declared range, or ValueError."""
    args = typing.get_args(hint)
    optional = (typing.get_origin(hint) in (typing.Union, types.UnionType)) and type(None) in args
    if optional:
        if value is None or value == "":
            return None
        hint = next(a for a in args if a is not type(None))
    if isinstance(hint, type) and issubclass(hint, Enum):
        if isinstance(value, hint):
            return value
        parse = getattr(hint, "parse", hint)
        try:
            return parse(value)
        except ValueError:
            choices = ", ".join(str(m.value) for m in hint)
            raise ValueError(f"{opt.key} must be one of {choices}") from None
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"{opt.key} must be true or false")
    if hint in (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{opt.key} must be a number")
        if hint is int and isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{opt.key} must be a whole number")
            value = int(value)
        value = hint(value)
        if opt.minimum is not None and value < opt.minimum:
            raise ValueError(f"{opt.key} must be at least {_plain(opt.minimum)}")
        if opt.maximum is not None and value > opt.maximum:
            raise ValueError(f"{opt.key} must be at most {_plain(opt.maximum)}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{opt.key} must be text")
        return value
    raise TypeError(f"setting {opt.key} has an unsupported type {hint!r}")  # a declaration bug


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _stored(value: Any) -> Any:
    """A value as YAML keeps it (enums by their value)."""
    return value.value if isinstance(value, Enum) else value


@dataclass
class GeneralSettings(Section):
    title: ClassVar[str] = "General"

    workload_python: str = option(
        "",
        "workload_python",
        "Workload Python",
        "Interpreter that runs GPU jobs. Empty: the panel's own interpreter. Making a "
        "managed environment active (PyTorch tab) sets it.",
    )
    job_cancel_grace_s: float = option(
        3.0,
        "job_cancel_grace_s",
        "Cancel grace period (s)",
        "How long a cancelled job may clean up before it is killed.",
        minimum=0.1,
        maximum=60.0,
    )


@dataclass
class WindowSettings(Section):
    title: ClassVar[str] = "Window"

    geometry: str = option("", "window_geometry", "Window geometry", visible=False)
    state: str = option("", "window_state", "Window state", visible=False)
    last_tab: str = option("", "last_tab", "Last tab", visible=False)
    # Whether the log dock was open at close: a closed one is built after the first frame.
    log_open: bool = option(False, "log_open", "Log open", visible=False)


@dataclass
class MonitorSettings(Section):
    """Sampling and alerts; alerts are read on every sample, so changes apply at once."""

    title: ClassVar[str] = "Monitor"

    interval_ms: int = option(
        500,
        "telemetry_interval_ms",
        "Sampling interval (ms)",
        "How often the Monitor reads the GPUs.",
        minimum=100,
        maximum=5000,
    )
    alerts_enabled: bool = option(
        True, "alerts_enabled", "Telemetry alerts", "Warn about heat, VRAM and power."
    )
    alert_temp_margin_c: float = option(
        5.0,
        "alert_temp_margin_c",
        "Alert: °C below crit",
        "Warn when a GPU temperature comes this close to its crit limit.",
        minimum=0.0,
        maximum=50.0,
    )
    alert_vram_percent: float = option(
        90.0,
        "alert_vram_percent",
        "Alert: VRAM use (%)",
        "Warn when VRAM stays above this share of the total for the hold time.",
        minimum=10.0,
        maximum=100.0,
    )
    alert_vram_hold_s: float = option(
        5.0, "alert_vram_hold_s", "Alert: VRAM hold (s)", minimum=0.0, maximum=3600.0
    )
    alert_power_hold_s: float = option(
        10.0,
        "alert_power_hold_s",
        "Alert: power at cap hold (s)",
        "Warn when the GPU's power stays at its cap this long.",
        minimum=0.0,
        maximum=3600.0,
    )
    alert_cooldown_s: float = option(
        300.0,
        "alert_cooldown_s",
        "Alert cooldown (s)",
        "After an alert, the same alert on the same GPU stays quiet this long.",
        minimum=0.0,
        maximum=86400.0,
    )
    alert_desktop_notify: bool = option(
        True,
        "alert_desktop_notify",
        "Alert desktop notifications",
        "Also show alerts as desktop notifications (where a system tray exists).",
    )


@dataclass
class ChatSettings(Section):
    """The model panel's last choices and the sampling defaults of the tab and the CLI."""

    title: ClassVar[str] = "Chat"

    last_model: str = option("", "chat_last_model", "Last chat model", visible=False)
    precision: Precision | None = option(
        None,
        "chat_precision",
        "Chat precision",
        "nf4, int8, fp16, bf16 or fp32; empty: NF4 on a GPU, bf16 on the CPU.",
        visible=False,
    )
    device: Device = option(
        Device.AUTO, "chat_device", "Chat device", "auto, gpu or cpu.", visible=False
    )
    context_length: int = option(
        4096,
        "chat_context_length",
        "Chat context length",
        "Tokens of conversation kept for the model (the KV cache grows with it).",
        minimum=256,
        maximum=1_048_576,
        visible=False,
    )
    temperature: float = option(
        0.7, "chat_temperature", "Temperature", minimum=0.0, maximum=5.0, visible=False
    )
    top_p: float = option(0.95, "chat_top_p", "Top-p", minimum=0.0, maximum=1.0, visible=False)
    top_k: int = option(50, "chat_top_k", "Top-k", minimum=0, maximum=100_000, visible=False)
    repetition_penalty: float = option(
        1.1,
        "chat_repetition_penalty",
        "Repetition penalty",
        minimum=0.5,
        maximum=3.0,
        visible=False,
    )
    max_new_tokens: int = option(
        512, "chat_max_new_tokens", "Max new tokens", minimum=1, maximum=65_536, visible=False
    )
    seed: int = option(
        -1, "chat_seed", "Seed", "-1: random.", minimum=-1, maximum=2**31 - 1, visible=False
    )
    system_prompt: str = option("", "chat_system_prompt", "System prompt", visible=False)


@dataclass
class PyTorchSettings(Section):
    title: ClassVar[str] = "PyTorch"

    index_mirror: str = option(
        "",
        "torch_index_mirror",
        "PyTorch index mirror",
        "Replaces https://download.pytorch.org/whl in install plans (e.g. a local mirror). "
        "Empty: the public index.",
    )
    amd_repo_mirror: str = option(
        "",
        "torch_amd_repo_mirror",
        "AMD wheel mirror",
        "Replaces https://repo.radeon.com in install plans. Empty: AMD's server.",
    )
    pypi_index_url: str = option(
        "",
        "pypi_index_url",
        "PyPI mirror",
        "Index for dependencies of AMD-hosted wheels. Empty: https://pypi.org/simple.",
    )
    base_python: str = option(
        "",
        "torch_base_python",
        "Base Python for new environments",
        "Interpreter new PyTorch environments are created from (AMD's Windows wheels need "
        "Python 3.12). Empty: the panel's own.",
    )
    use_pip_config: bool = option(
        False,
        "torch_use_pip_config",
        "Use my pip configuration",
        "Let installs read pip.conf and PIP_* variables. Off: only the planned index is used, "
        "so no other torch build can slip in.",
    )


@dataclass
class EnvironmentSettings(Section):
    title: ClassVar[str] = "Environment variables"

    backups_keep: int = option(
        20,
        "env_backups_keep",
        "Environment backups kept",
        "How many backups of each environment file the variable editor keeps.",
        minimum=1,
        maximum=1000,
    )


SECTIONS: dict[str, type[Section]] = {
    "general": GeneralSettings,
    "window": WindowSettings,
    "monitor": MonitorSettings,
    "chat": ChatSettings,
    "pytorch": PyTorchSettings,
    "environment": EnvironmentSettings,
}


def option_of(section: type[Section], name: str) -> Option:
    """The declaration of ``section.name`` (widgets take their limits from it)."""
    return _fields(section)[name][0]


@dataclass(frozen=True)
class Declared:
    """One declared option, with where it lives, as the Settings dialog lists them."""

    section: str
    name: str
    option: Option
    type: Any
    default: Any


_DECLARED: tuple[Declared, ...] = ()
_BY_KEY: dict[str, Declared] = {}


def declared() -> Iterator[Declared]:
    """Every option of every section, in declaration order."""
    global _DECLARED
    if not _DECLARED:  # computed once: the declarations never change
        _DECLARED = tuple(
            Declared(section, name, opt, hint, default)
            for section, cls in SECTIONS.items()
            for name, (opt, hint, default) in _fields(cls).items()
        )
    return iter(_DECLARED)


def _declared_by_key() -> dict[str, Declared]:
    if not _BY_KEY:
        _BY_KEY.update((d.option.key, d) for d in declared())
    return _BY_KEY


class Settings:
    """The settings file in memory: typed sections; ``save`` writes atomically."""

    general: GeneralSettings
    window: WindowSettings
    monitor: MonitorSettings
    chat: ChatSettings
    pytorch: PyTorchSettings
    environment: EnvironmentSettings

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.settings_file()
        for name, cls in SECTIONS.items():
            setattr(self, name, cls())
        self._extra: dict[str, Any] = {}
        self.problems: list[str] = []

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        """Read the file; a missing file gives defaults, a broken one is reported and kept."""
        settings = cls(path)
        try:
            if settings.path.exists() and not settings.path.is_file():  # a FIFO would block
                raise OSError("not a regular file")
            text = settings.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return settings
        except (OSError, UnicodeDecodeError) as exc:
            settings.problems.append(f"Could not read {settings.path}: {exc}")
            return settings
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            settings.problems.append(f"{settings.path} is not valid YAML; using defaults ({exc})")
            return settings
        if not isinstance(data, dict):
            settings.problems.append(f"{settings.path} is not a mapping; using defaults")
            return settings
        by_key = _declared_by_key()
        for key, value in data.items():
            where = by_key.get(str(key))
            if where is None:
                settings._extra[str(key)] = value
                continue
            try:
                setattr(getattr(settings, where.section), where.name, value)
            except ValueError as exc:
                settings.problems.append(f"{exc}; using the default")
        return settings

    def value(self, item: Declared) -> Any:
        return getattr(getattr(self, item.section), item.name)

    def assign(self, item: Declared, value: Any) -> None:
        """Set one declared option (ValueError when the value does not fit)."""
        setattr(getattr(self, item.section), item.name, value)

    def as_dict(self) -> dict[str, Any]:
        """Every option by its file key, as the file would keep it."""
        return {d.option.key: _stored(self.value(d)) for d in declared()}

    def save(self) -> None:
        """Write every non-default value (and unknown keys) atomically."""
        import yaml

        data = dict(self._extra)
        for item in declared():
            value = self.value(item)
            if value != item.default:
                data[item.option.key] = _stored(value)
        text = yaml.safe_dump(data, sort_keys=True, allow_unicode=True)
        try:
            write_atomic(self.path, text.encode("utf-8"))
        except PanelError:
            log.exception("saving settings failed")
            raise
