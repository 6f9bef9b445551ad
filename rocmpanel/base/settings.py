"""Every user setting, declared once (name, type, default, label), and its YAML store.

Other modules add their settings to ``SETTINGS`` here, so the whole list is in one place.
Unknown keys in the file are kept (a newer version may have written them); values of the
wrong type fall back to the default and are reported in ``Settings.problems``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from rocmpanel.base import paths
from rocmpanel.base.atomic import write_atomic
from rocmpanel.base.errors import PanelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Setting:
    """One user setting: its key, Python type, default, a label for the UI, and help."""

    name: str
    type: type
    default: Any
    label: str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    visible: bool = True  # False: kept by the program itself, not shown in the Settings dialog

    def coerce(self, value: Any) -> Any:
        """Return ``value`` as this setting's type, or raise ValueError."""
        if self.type is bool:
            if isinstance(value, bool):
                return value
            raise ValueError(f"{self.name} must be true or false")
        if self.type in (int, float) and isinstance(value, bool):
            raise ValueError(f"{self.name} must be a number")
        if self.type is float and isinstance(value, int):
            value = float(value)
        if not isinstance(value, self.type):
            raise ValueError(f"{self.name} must be of type {self.type.__name__}")
        if self.type in (int, float):
            number = float(cast(float, value))
            if self.minimum is not None and number < self.minimum:
                raise ValueError(f"{self.name} must be at least {self.minimum}")
            if self.maximum is not None and number > self.maximum:
                raise ValueError(f"{self.name} must be at most {self.maximum}")
        return value


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "workload_python",
        str,
        "",
        "Workload Python",
        "Interpreter that runs GPU jobs. Empty: the panel's own interpreter. Making a "
        "managed environment active (PyTorch tab) sets it.",
    ),
    Setting("window_geometry", str, "", "Window geometry", visible=False),
    Setting("window_state", str, "", "Window state", visible=False),
    Setting("last_tab", str, "", "Last tab", visible=False),
    Setting(
        "job_cancel_grace_s",
        float,
        3.0,
        "Cancel grace period (s)",
        "How long a cancelled job may clean up before it is killed.",
        minimum=0.1,
        maximum=60.0,
    ),
    Setting(
        "telemetry_interval_ms",
        int,
        500,
        "Sampling interval (ms)",
        "How often the Monitor reads the GPUs.",
        minimum=100,
        maximum=5000,
    ),
    # Monitor alerts (rocmpanel.monitor.alerts): read on every sample, so changes apply at once.
    Setting("alerts_enabled", bool, True, "Telemetry alerts", "Warn about heat, VRAM and power."),
    Setting(
        "alert_temp_margin_c",
        float,
        5.0,
        "Alert: °C below crit",
        "Warn when a GPU temperature comes this close to its crit limit.",
        minimum=0.0,
        maximum=50.0,
    ),
    Setting(
        "alert_vram_percent",
        float,
        90.0,
        "Alert: VRAM use (%)",
        "Warn when VRAM stays above this share of the total for the hold time.",
        minimum=10.0,
        maximum=100.0,
    ),
    Setting("alert_vram_hold_s", float, 5.0, "Alert: VRAM hold (s)", minimum=0.0, maximum=3600.0),
    Setting(
        "alert_power_hold_s",
        float,
        10.0,
        "Alert: power at cap hold (s)",
        "Warn when the GPU's power stays at its cap this long.",
        minimum=0.0,
        maximum=3600.0,
    ),
    Setting(
        "alert_cooldown_s",
        float,
        300.0,
        "Alert cooldown (s)",
        "After an alert, the same alert on the same GPU stays quiet this long.",
        minimum=0.0,
        maximum=86400.0,
    ),
    Setting(
        "alert_desktop_notify",
        bool,
        True,
        "Alert desktop notifications",
        "Also show alerts as desktop notifications (where a system tray exists).",
    ),
    # Chat: the model panel keeps its last choices here (the recent models are in sqlite).
    Setting("chat_last_model", str, "", "Last chat model", visible=False),
    Setting(
        "chat_precision",
        str,
        "",
        "Chat precision",
        "nf4, int8, fp16, bf16 or fp32; empty: NF4 on a GPU, bf16 on the CPU.",
        visible=False,
    ),
    Setting("chat_device", str, "auto", "Chat device", "auto, cuda or cpu.", visible=False),
    Setting(
        "chat_context_length",
        int,
        4096,
        "Chat context length",
        "Tokens of conversation kept for the model (the KV cache grows with it).",
        minimum=256,
        maximum=1_048_576,
        visible=False,
    ),
    Setting("chat_temperature", float, 0.7, "Temperature", minimum=0.0, maximum=5.0, visible=False),
    Setting("chat_top_p", float, 0.95, "Top-p", minimum=0.0, maximum=1.0, visible=False),
    Setting("chat_top_k", int, 50, "Top-k", minimum=0, maximum=100_000, visible=False),
    Setting(
        "chat_repetition_penalty",
        float,
        1.1,
        "Repetition penalty",
        minimum=0.5,
        maximum=3.0,
        visible=False,
    ),
    Setting(
        "chat_max_new_tokens", int, 512, "Max new tokens", minimum=1, maximum=65_536, visible=False
    ),
    Setting(
        "chat_seed", int, -1, "Seed", "-1: random.", minimum=-1, maximum=2**31 - 1, visible=False
    ),
    Setting("chat_system_prompt", str, "", "System prompt", visible=False),
    Setting(
        "torch_index_mirror",
        str,
        "",
        "PyTorch index mirror",
        "Replaces https://download.pytorch.org/whl in install plans (e.g. a local mirror). "
        "Empty: the public index.",
    ),
    Setting(
        "torch_amd_repo_mirror",
        str,
        "",
        "AMD wheel mirror",
        "Replaces https://repo.radeon.com in install plans. Empty: AMD's server.",
    ),
    Setting(
        "pypi_index_url",
        str,
        "",
        "PyPI mirror",
        "Index for dependencies of AMD-hosted wheels. Empty: https://pypi.org/simple.",
    ),
    Setting(
        "torch_base_python",
        str,
        "",
        "Base Python for new environments",
        "Interpreter new PyTorch environments are created from (AMD's Windows wheels need "
        "Python 3.12). Empty: the panel's own.",
    ),
    Setting(
        "torch_use_pip_config",
        bool,
        False,
        "Use my pip configuration",
        "Let installs read pip.conf and PIP_* variables. Off: only the planned index is used, "
        "so no other torch build can slip in.",
    ),
    Setting(
        "env_backups_keep",
        int,
        20,
        "Environment backups kept",
        "How many backups of each environment file the variable editor keeps.",
        minimum=1,
        maximum=1000,
    ),
)

BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}


class Settings:
    """The settings file in memory. ``get``/``set`` check names and types; ``save`` is atomic."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.settings_file()
        self._values: dict[str, Any] = {}
        self._extra: dict[str, Any] = {}
        self.problems: list[str] = []

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        """Read the file; a missing file gives defaults, a broken one is reported and kept."""
        settings = cls(path)
        try:
            text = settings.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return settings
        except OSError as exc:
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
        for key, value in data.items():
            setting = BY_NAME.get(str(key))
            if setting is None:
                settings._extra[str(key)] = value
                continue
            try:
                settings._values[setting.name] = setting.coerce(value)
            except ValueError as exc:
                settings.problems.append(f"{exc}; using the default")
        return settings

    def get(self, name: str) -> Any:
        setting = BY_NAME.get(name)
        if setting is None:
            raise KeyError(f"unknown setting {name!r}")
        return self._values.get(name, setting.default)

    def set(self, name: str, value: Any) -> None:
        setting = BY_NAME.get(name)
        if setting is None:
            raise KeyError(f"unknown setting {name!r}")
        self._values[name] = setting.coerce(value)

    def as_dict(self) -> dict[str, Any]:
        return {s.name: self.get(s.name) for s in SETTINGS}

    def save(self) -> None:
        """Write every non-default value (and unknown keys) atomically."""
        import yaml

        data = dict(self._extra)
        data.update(
            {k: v for k, v in self._values.items() if v != BY_NAME[k].default},
        )
        text = yaml.safe_dump(data, sort_keys=True, allow_unicode=True)
        try:
            write_atomic(self.path, text.encode("utf-8"))
        except PanelError:
            log.exception("saving settings failed")
            raise
