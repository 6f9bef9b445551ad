"""Every user setting, declared once: sections as dataclasses, each option with its type,
default, range, label and help, and the YAML file that keeps them.

Code reads typed values (``settings.chat.temperature`` is a float) and widgets take their
limits from the declaration (``option_of(ChatSettings, "temperature").maximum``). Assigning
a value checks it against its declaration and raises ValueError when it does not fit.

The file stays flat (``chat_temperature: 0.7``): each option names its key, so files
written by earlier versions keep working. The user's file is never lost: unknown keys are
kept (a newer version may have written them), a save writes only the options the session
changed, a value that does not fit its declaration is the default for the session but stays
in the file, and a file that does not parse is kept aside before anything replaces it (see
:class:`Settings`). What was wrong is reported in ``Settings.problems``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import sys
import threading
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from rocmpanel.base import paths
from rocmpanel.base.atomic import (
    backup_file,
    copy_aside,
    remove_stale_temp_files,
    resolved,
    write_atomic,
)
from rocmpanel.base.enums import Device, Language, Precision, Theme
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP
from rocmpanel.base.locking import locked

log = logging.getLogger(__name__)


# Where the Settings dialog shows an option (Option.group), in the dialog's order.
GROUPS = ("General", "Workload", "Monitor", "Chat", "Network")
# What an option's text names (Option.kind): the dialog offers Browse and checks it.
PYTHON = "python"  # an interpreter: a command on PATH or the full path of a program


@dataclass(frozen=True)
class Option:
    """How one setting is stored and shown: its key in the file, label, help and range;
    for the Settings dialog also its group, what its text names (``kind``), the
    placeholder an empty field shows and the unit after a number (``suffix``)."""

    key: str
    label: str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    visible: bool = True  # False: kept by the program itself, not shown in the Settings dialog
    group: str = "General"  # one of GROUPS
    kind: str = ""  # "" (plain text or a number) or PYTHON
    placeholder: str = ""
    suffix: str = ""  # " s", " ms", " %", " °C"


def option(
    default: Any,
    key: str,
    label: str,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    visible: bool = True,
    group: str = "General",
    kind: str = "",
    placeholder: str = "",
    suffix: str = "",
) -> Any:
    """A dataclass field carrying its :class:`Option` (the one place a default is set)."""
    meta = Option(key, label, help, minimum, maximum, visible, group, kind, placeholder, suffix)
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
        QT_TRANSLATE_NOOP("Settings", "Python for GPU jobs"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "The interpreter that runs GPU jobs (PyTorch checks, chat). Empty: the panel's own "
            "Python. Making an environment active in the PyTorch tab sets it.",
        ),
        group="Workload",
        kind=PYTHON,
        placeholder=QT_TRANSLATE_NOOP("Settings", "the panel's own Python"),
    )
    active_preset: str = option(
        "",
        "tuning_active_preset",
        QT_TRANSLATE_NOOP("Settings", "Tuning preset for jobs"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "The id of the tuning preset every job runs under (chosen in the Tuning tab). "
            "Empty: no preset.",
        ),
        visible=False,
    )
    job_gpus: str = option(
        "",
        "job_gpus",
        QT_TRANSLATE_NOOP("Settings", "GPUs for jobs"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "The GPUs every job runs on, by PCI address, separated by commas (chosen with the "
            "GPUs button in the status bar). Empty: the discrete GPUs; all: every GPU.",
        ),
        visible=False,
    )
    language: Language = option(
        Language.SYSTEM,
        "language",
        QT_TRANSLATE_NOOP("Settings", "Language"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "The window's language: system (the system's when a translation exists, else "
            "English), en or zh_CN. Takes effect when the panel starts again.",
        ),
    )
    theme: Theme = option(
        Theme.SYSTEM,
        "theme",
        QT_TRANSLATE_NOOP("Settings", "Colours"),
        QT_TRANSLATE_NOOP(
            "Settings", "system (follows the system's light or dark scheme), light or dark."
        ),
    )
    guide_dismissed: bool = option(
        False,
        "first_run_guide_dismissed",
        QT_TRANSLATE_NOOP("Settings", "First-run guide dismissed"),
        visible=False,
    )
    job_cancel_grace_s: float = option(
        3.0,
        "job_cancel_grace_s",
        QT_TRANSLATE_NOOP("Settings", "Time a cancelled job gets to finish"),
        QT_TRANSLATE_NOOP(
            "Settings", "How long a cancelled job may clean up before it is stopped by force."
        ),
        minimum=0.1,
        maximum=60.0,
        suffix=" s",
    )


@dataclass
class WindowSettings(Section):
    title: ClassVar[str] = "Window"

    geometry: str = option(
        "", "window_geometry", QT_TRANSLATE_NOOP("Settings", "Window geometry"), visible=False
    )
    state: str = option(
        "", "window_state", QT_TRANSLATE_NOOP("Settings", "Window state"), visible=False
    )
    last_tab: str = option("", "last_tab", QT_TRANSLATE_NOOP("Settings", "Last tab"), visible=False)
    # Whether the log dock was open at close: a closed one is built after the first frame.
    log_open: bool = option(
        False, "log_open", QT_TRANSLATE_NOOP("Settings", "Log open"), visible=False
    )


@dataclass
class MonitorSettings(Section):
    """Sampling and alerts; alerts are read on every sample, so changes apply at once."""

    title: ClassVar[str] = "Monitor"

    interval_ms: int = option(
        500,
        "telemetry_interval_ms",
        QT_TRANSLATE_NOOP("Settings", "Read the GPUs every"),
        QT_TRANSLATE_NOOP("Settings", "How often the Monitor reads the GPUs."),
        minimum=100,
        maximum=5000,
        group="Monitor",
        suffix=" ms",
    )
    alerts_enabled: bool = option(
        True,
        "alerts_enabled",
        QT_TRANSLATE_NOOP("Settings", "Alerts on heat, VRAM and power"),
        QT_TRANSLATE_NOOP(
            "Settings", "Warn when a GPU runs hot, fills its VRAM or stays at its power cap."
        ),
        group="Monitor",
    )
    alert_temp_margin_c: float = option(
        5.0,
        "alert_temp_margin_c",
        QT_TRANSLATE_NOOP("Settings", "Alert when this close to the critical temperature"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "Warn when a GPU temperature comes this close to the critical limit its driver "
            "reports.",
        ),
        minimum=0.0,
        maximum=50.0,
        group="Monitor",
        suffix=" °C",
    )
    alert_vram_percent: float = option(
        90.0,
        "alert_vram_percent",
        QT_TRANSLATE_NOOP("Settings", "Alert when VRAM use stays above"),
        QT_TRANSLATE_NOOP(
            "Settings", "Warn when VRAM use stays above this share of the total for the time below."
        ),
        minimum=10.0,
        maximum=100.0,
        group="Monitor",
        suffix=" %",
    )
    alert_vram_hold_s: float = option(
        5.0,
        "alert_vram_hold_s",
        QT_TRANSLATE_NOOP("Settings", "… for at least"),
        QT_TRANSLATE_NOOP(
            "Settings", "How long VRAM use must stay above the share above before the alert."
        ),
        minimum=0.0,
        maximum=3600.0,
        group="Monitor",
        suffix=" s",
    )
    alert_power_hold_s: float = option(
        10.0,
        "alert_power_hold_s",
        QT_TRANSLATE_NOOP("Settings", "Alert when power stays at its cap for"),
        QT_TRANSLATE_NOOP("Settings", "Warn when a GPU's power stays at its cap this long."),
        minimum=0.0,
        maximum=3600.0,
        group="Monitor",
        suffix=" s",
    )
    alert_cooldown_s: float = option(
        300.0,
        "alert_cooldown_s",
        QT_TRANSLATE_NOOP("Settings", "Repeat the same alert after at least"),
        QT_TRANSLATE_NOOP(
            "Settings", "After an alert, the same alert on the same GPU stays quiet this long."
        ),
        minimum=0.0,
        maximum=86400.0,
        group="Monitor",
        suffix=" s",
    )
    alert_desktop_notify: bool = option(
        True,
        "alert_desktop_notify",
        QT_TRANSLATE_NOOP("Settings", "Show alerts as desktop notifications"),
        QT_TRANSLATE_NOOP(
            "Settings", "Also show alerts as desktop notifications (where a system tray exists)."
        ),
        group="Monitor",
    )


@dataclass
class ChatSettings(Section):
    """The model panel's last choices and the sampling defaults of the tab and the CLI."""

    title: ClassVar[str] = "Chat"

    last_model: str = option(
        "", "chat_last_model", QT_TRANSLATE_NOOP("Settings", "Last chat model"), visible=False
    )
    precision: Precision | None = option(
        None,
        "chat_precision",
        QT_TRANSLATE_NOOP("Settings", "Chat precision"),
        QT_TRANSLATE_NOOP(
            "Settings", "nf4, int8, fp16, bf16 or fp32; empty: NF4 on a GPU, bf16 on the CPU."
        ),
        visible=False,
    )
    device: Device = option(
        Device.AUTO,
        "chat_device",
        QT_TRANSLATE_NOOP("Settings", "Chat device"),
        QT_TRANSLATE_NOOP("Settings", "auto, gpu or cpu."),
        visible=False,
    )
    context_length: int = option(
        4096,
        "chat_context_length",
        QT_TRANSLATE_NOOP("Settings", "Chat context length"),
        QT_TRANSLATE_NOOP(
            "Settings", "Tokens of conversation kept for the model (the KV cache grows with it)."
        ),
        minimum=256,
        maximum=1_048_576,
        visible=False,
    )
    temperature: float = option(
        0.7,
        "chat_temperature",
        QT_TRANSLATE_NOOP("Settings", "Temperature"),
        minimum=0.0,
        maximum=5.0,
        visible=False,
    )
    top_p: float = option(
        0.95,
        "chat_top_p",
        QT_TRANSLATE_NOOP("Settings", "Top-p"),
        minimum=0.0,
        maximum=1.0,
        visible=False,
    )
    top_k: int = option(
        50,
        "chat_top_k",
        QT_TRANSLATE_NOOP("Settings", "Top-k"),
        minimum=0,
        maximum=100_000,
        visible=False,
    )
    repetition_penalty: float = option(
        1.1,
        "chat_repetition_penalty",
        QT_TRANSLATE_NOOP("Settings", "Repetition penalty"),
        minimum=0.5,
        maximum=3.0,
        visible=False,
    )
    max_new_tokens: int = option(
        512,
        "chat_max_new_tokens",
        QT_TRANSLATE_NOOP("Settings", "Max new tokens"),
        minimum=1,
        maximum=65_536,
        visible=False,
    )
    seed: int = option(
        -1,
        "chat_seed",
        QT_TRANSLATE_NOOP("Settings", "Seed"),
        QT_TRANSLATE_NOOP("Settings", "-1: random."),
        minimum=-1,
        maximum=2**31 - 1,
        visible=False,
    )
    system_prompt: str = option(
        "", "chat_system_prompt", QT_TRANSLATE_NOOP("Settings", "System prompt"), visible=False
    )
    serve_port: int = option(
        8000,
        "chat_serve_port",
        QT_TRANSLATE_NOOP("Settings", "Serve port"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "The port the Chat tab's OpenAI-compatible server listens on (127.0.0.1); "
            "0: any free port.",
        ),
        minimum=0,
        maximum=65_535,
        visible=False,
    )


@dataclass
class PyTorchSettings(Section):
    title: ClassVar[str] = "PyTorch"

    index_mirror: str = option(
        "",
        "torch_index_mirror",
        QT_TRANSLATE_NOOP("Settings", "PyTorch wheel index"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "Replaces https://download.pytorch.org/whl in install plans (e.g. a local mirror). "
            "Empty: the public index.",
        ),
        group="Network",
        placeholder="https://download.pytorch.org/whl",
    )
    amd_repo_mirror: str = option(
        "",
        "torch_amd_repo_mirror",
        QT_TRANSLATE_NOOP("Settings", "AMD wheel server"),
        QT_TRANSLATE_NOOP(
            "Settings", "Replaces https://repo.radeon.com in install plans. Empty: AMD's server."
        ),
        group="Network",
        placeholder="https://repo.radeon.com",
    )
    pypi_index_url: str = option(
        "",
        "pypi_index_url",
        QT_TRANSLATE_NOOP("Settings", "PyPI index"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "Index for dependencies of AMD-hosted wheels. Empty: https://pypi.org/simple.",
        ),
        group="Network",
        placeholder="https://pypi.org/simple",
    )
    base_python: str = option(
        "",
        "torch_base_python",
        QT_TRANSLATE_NOOP("Settings", "Python for new environments"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "The interpreter new PyTorch environments are created from (AMD's Windows wheels need "
            "Python 3.12). Empty: the panel's own Python.",
        ),
        group="Workload",
        kind=PYTHON,
        placeholder=QT_TRANSLATE_NOOP("Settings", "the panel's own Python"),
    )
    use_pip_config: bool = option(
        False,
        "torch_use_pip_config",
        QT_TRANSLATE_NOOP("Settings", "Let pip read my pip.conf and PIP_* variables"),
        QT_TRANSLATE_NOOP(
            "Settings",
            "Off: installs use only the planned index, so no other torch build can slip in.",
        ),
        group="Network",
    )


@dataclass
class EnvironmentSettings(Section):
    title: ClassVar[str] = "Environment variables"

    backups_keep: int = option(
        20,
        "env_backups_keep",
        QT_TRANSLATE_NOOP("Settings", "Backups kept of each environment file"),
        QT_TRANSLATE_NOOP(
            "Settings", "How many backups of each environment file the variable editor keeps."
        ),
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


# -- the file ---------------------------------------------------------------------------------
# What a settings file can be when it is read (see _read).
_MISSING = "missing"  # no file: the defaults, and a save creates it
_USABLE = "usable"  # a mapping (some values may still not fit their declaration)
_DAMAGED = "damaged"  # a regular file that does not hold settings (YAML error, a list, ...)
_UNTOUCHABLE = "untouchable"  # not a regular file, or unreadable: never replaced

BAD_TAG = "bad"  # a damaged file replaced by a save is kept as settings.yaml.bad-<time>
# The first save of a session copies the file it replaces into paths.backups_dir() (a save
# writes YAML afresh, so comments and layout of a hand-written file go): the newest few.
KEEP_BACKUPS = 5

# The notices already printed by this process (a command loads the settings more than once).
_told: set[tuple[str, tuple[str, ...]]] = set()


@dataclass(frozen=True)
class _FileState:
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    problem: str = ""  # why the file cannot be used, as "<path> <problem>"
    duplicates: tuple[str, ...] = ()  # keys written more than once (the last one counts)
    comments: bool = False  # the text has YAML comments (a save does not keep them)


def _yaml_problem(exc: Exception) -> str:
    mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"is not valid YAML ({where}{problem})"


def _shape(data: object) -> str:
    if isinstance(data, str):
        return "a line of text"
    if isinstance(data, list):
        return "a list"
    if isinstance(data, bool):
        return "a true/false value"
    if isinstance(data, (int, float)):
        return "a number"
    return f"a {type(data).__name__}"


@functools.cache
def _loader() -> type:
    """yaml.SafeLoader that notes the keys a mapping holds more than once (PyYAML takes the
    last one without a word)."""
    import yaml

    class _Loader(yaml.SafeLoader):
        duplicates: list[str]

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[object] = set()
            if isinstance(node, yaml.MappingNode):
                for key_node, _ in node.value:
                    if isinstance(key_node, yaml.ScalarNode):
                        key = key_node.value
                        if key in seen and key not in self.duplicates:
                            self.duplicates.append(key)
                        seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return _Loader


def _has_comments(text: str) -> bool:
    """Whether ``text`` has a YAML comment: a line that starts with ``#``, or `` #`` after a
    value on a line without quotes (a quoted value may hold a ``#``)."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            return True
        if " #" in stripped and '"' not in stripped and "'" not in stripped:
            return True
    return False


def _read(path: Path) -> _FileState:
    """What ``path`` holds, read without blocking and at most CONFIG_LIMIT bytes."""
    from rocmpanel.base.files import CONFIG_LIMIT, NotRegularFileError, TooLargeError, read_bytes

    try:
        raw = read_bytes(path, CONFIG_LIMIT)
    except FileNotFoundError:
        return _FileState(_MISSING)
    except NotRegularFileError as exc:
        return _FileState(_UNTOUCHABLE, problem=str(exc))
    except TooLargeError as exc:
        return _FileState(_DAMAGED, problem=f"{exc} (settings are a few lines)")
    except OSError as exc:
        return _FileState(_UNTOUCHABLE, problem=f"{path} could not be read ({exc.strerror or exc})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _FileState(_DAMAGED, problem=f"{path} is not UTF-8 text")
    import yaml

    loader = _loader()(text)
    loader.duplicates = []
    try:
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        return _FileState(_DAMAGED, problem=f"{path} {_yaml_problem(exc)}")
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. an unhashable key
        return _FileState(_DAMAGED, problem=f"{path} could not be parsed ({exc})")
    comments = _has_comments(text)
    if data is None:
        return _FileState(_USABLE, comments=comments)  # empty, or comments only
    if not isinstance(data, dict):
        return _FileState(
            _DAMAGED,
            problem=f"{path} does not hold settings (`key: value` lines) but {_shape(data)}",
        )
    return _FileState(
        _USABLE,
        {str(key): value for key, value in data.items()},
        duplicates=tuple(loader.duplicates),
        comments=comments,
    )


def keep_aside(path: Path) -> Path:
    """Copy the regular file ``path`` to a free ``<name>.bad-<time>`` beside it (the copy
    is complete before this returns); the copy's path."""
    target = paths.aside(path, BAD_TAG)
    try:
        copy_aside(path, target)
    except OSError as exc:
        raise PanelError(
            f"Settings not saved: {path} could not be kept aside as {target.name} "
            f"({exc.strerror or exc}), so it was left as it is.",
            str(exc),
        ) from exc
    return target


class Settings:
    """The settings file in memory: typed sections.

    Reading (:meth:`load`) never changes the file. What a file that cannot be used gets:

    * **not YAML, not a mapping, not UTF-8, larger than 4 MiB** (damaged): the whole session
      runs on the defaults and the file is left as it is. Only a save of a setting changed
      in this session replaces it, and it is first copied, byte for byte, to
      ``settings.yaml.bad-<YYYYmmdd-HHMMSS>`` beside it. The window's own bookkeeping
      (size, last tab), saved at close, never replaces it (``replace_damaged=False``).
    * **a value that does not fit its declaration** (wrong type, out of range): that one
      setting is the default for the session; the file keeps the user's value, as a save
      writes only the settings this session changed.
    * **a FIFO, a device, a folder, an unreadable file**: the defaults, and it is never
      replaced (a save says why and writes nothing).

    :meth:`save` merges: under a lock (``.settings.yaml.lock``) it reads the file again and
    writes back what it holds (unknown keys, values the user wrote by hand or another
    panel saved meanwhile) with only the settings this session changed put in, so two
    panels open at once never undo each other's changes. ``problems`` says what was wrong,
    one sentence each; :meth:`load` also prints them on stderr once per process (a headless
    command), unless ``tell=False`` (the window shows them in a dialog instead).
    """

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
        self.problems: list[str] = []
        # Why the file as a whole could not be used ("" when it could, or was missing).
        self.damaged = ""
        # Each option's value as the file was understood (the default where the file had
        # none, or one that did not fit): a save writes only what differs from this.
        self._saved: dict[str, Any] = {d.option.key: _stored(d.default) for d in declared()}
        self._save_lock = threading.Lock()
        # Whether this session already backed up the file it replaces (the first save does).
        self._backed_up = False
        # False: saves write nothing (the smoke test, which must leave the user's files alone).
        self.writable = True

    @classmethod
    def load(cls, path: Path | None = None, *, tell: bool = True) -> Settings:
        """Read the file (never changing it); see the class for what a bad file gets."""
        settings = cls(path)
        state = _read(settings.path)
        if state.kind == _DAMAGED:
            settings.damaged = state.problem
            settings.problems.append(
                f"{state.problem}. rocmpanel uses the default settings this time and leaves "
                "the file as it is: correct it, or delete it to start afresh. (Changing a "
                f"setting replaces it; your file is then kept beside it as "
                f"{settings.path.name}.{BAD_TAG}-<date>-<time>.)"
            )
        elif state.kind == _UNTOUCHABLE:
            settings.damaged = state.problem
            settings.problems.append(
                f"{state.problem}. rocmpanel uses the default settings and saves none while "
                "it is there: move it away."
            )
        for key in state.duplicates:
            settings.problems.append(
                f"{settings.path}: the key {key!r} appears more than once; the last one is used."
            )
        by_key = _declared_by_key()
        for key, value in state.data.items():
            where = by_key.get(key)
            if where is None:
                continue  # kept in the file: a save merges into what the file holds
            try:
                settings.assign(where, value)
            except ValueError as exc:
                settings.problems.append(
                    f"{settings.path}: {exc} (it is {_shown(value)}), so the default "
                    f"{_shown(_stored(where.default))} is used; the file keeps your value "
                    "until you change this setting."
                )
            else:
                settings._saved[key] = _stored(settings.value(where))
        told = (str(settings.path), tuple(settings.problems))
        if settings.problems and told not in _told:
            _told.add(told)
            if tell:
                print("rocmpanel: " + " ".join(settings.problems), file=sys.stderr)
        return settings

    def value(self, item: Declared) -> Any:
        return getattr(getattr(self, item.section), item.name)

    def assign(self, item: Declared, value: Any) -> None:
        """Set one declared option (ValueError when the value does not fit)."""
        setattr(getattr(self, item.section), item.name, value)

    def as_dict(self) -> dict[str, Any]:
        """Every option by its file key, as the file would keep it."""
        return {d.option.key: _stored(self.value(d)) for d in declared()}

    def changed(self) -> dict[str, Any]:
        """The options this session changed since the file was read or last saved (by
        their file key, as the file keeps them)."""
        now = self.as_dict()
        return {key: value for key, value in now.items() if value != self._saved[key]}

    def save(self, *, replace_damaged: bool = True) -> list[str]:
        """Write the options this session changed into the file, atomically, keeping
        everything else it holds. Nothing changed: nothing is written.

        A damaged file is kept aside (``settings.yaml.bad-<time>``) and replaced by this
        session's settings; with ``replace_damaged=False`` it is left as it is and nothing
        is saved. Returns what the user should know (a file kept aside, a save skipped);
        PanelError when nothing could be written (a FIFO or unreadable file, a disk error).
        """
        import yaml

        with self._save_lock:
            changed = self.changed()
            if not changed or not self.writable:
                return []
            notices: list[str] = []
            with locked(self.path, refused="Settings not saved"):
                state = _read(self.path)
                if state.kind == _UNTOUCHABLE:
                    raise PanelError(
                        f"Settings not saved: {state.problem}. Move it away so that rocmpanel "
                        "can keep its settings there."
                    )
                if state.kind == _DAMAGED:
                    if not replace_damaged:
                        note = f"Settings not saved: {state.problem}, and it is left as it is."
                        log.warning("%s", note)
                        return [note]
                    kept = keep_aside(self.path)
                    data = {
                        key: value
                        for key, value in self.as_dict().items()
                        if value != _stored(_declared_by_key()[key].default)
                    }
                    notices.append(
                        f"{state.problem}: it was kept as {kept} and replaced by the "
                        "settings of this session."
                    )
                    log.warning("%s", notices[-1])
                else:
                    data = _merged(state.data, changed)
                    if state.kind == _USABLE and not self._backed_up:
                        notices += self._back_up(state)
                text = yaml.safe_dump(data, sort_keys=True, allow_unicode=True)
                target = resolved(self.path)
                for stale in remove_stale_temp_files(target.parent, target.name):
                    log.info("removed %s, left by a settings save that was killed", stale)
                try:
                    write_atomic(self.path, text.encode("utf-8"))
                except PanelError as exc:
                    log.warning("saving settings failed: %s", exc.message)
                    raise
                self._backed_up = True  # a later save replaces what this one wrote
            self._saved.update(changed)
        return notices

    def _back_up(self, state: _FileState) -> list[str]:
        """Copy the file this session's first save replaces into the backups folder (the
        newest :data:`KEEP_BACKUPS` are kept); a notice when it had comments, which the
        save drops. PanelError (nothing saved) when the copy cannot be made."""
        try:
            backup = backup_file(self.path, paths.backups_dir(), KEEP_BACKUPS)
        except PanelError as exc:
            raise PanelError(
                f"Settings not saved: {self.path} could not be backed up first "
                f"({exc.message.rstrip('.').removesuffix('; nothing was changed')}). "
                "Nothing was changed.",
                exc.detail,
            ) from exc
        self._backed_up = True
        if backup is None:
            return []
        log.info("settings: %s backed up as %s before the first save", self.path, backup)
        if not state.comments:
            return []
        note = (
            f"{self.path} had comments, which a save does not keep; the file as you wrote "
            f"it is kept as {backup}."
        )
        log.warning("%s", note)
        return [note]


def _shown(value: Any) -> str:
    """A value as a message quotes it."""
    if isinstance(value, str):
        return repr(value) if value else "empty"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _merged(on_disk: dict[str, Any], changed: dict[str, Any]) -> dict[str, Any]:
    """What the file holds now with ``changed`` put in: an option changed back to its
    default is removed; one this session left alone keeps the file's value (written in
    the current spelling when it fits, as it is when it does not); unknown keys stay."""
    by_key = _declared_by_key()
    data: dict[str, Any] = {}
    for key, value in on_disk.items():
        item = by_key.get(key)
        if item is not None and key not in changed:
            with contextlib.suppress(ValueError):  # not ours to fix: the user keeps theirs
                value = _stored(_coerce(item.option, item.type, value))
        data[key] = value
    for key, value in changed.items():
        if value == _stored(by_key[key].default):
            data.pop(key, None)
        else:
            data[key] = value
    return data
