"""Alerts on telemetry: hot GPU, VRAM nearly full, power held at its cap.

A condition must hold for its hold time before it fires, and the same alert on the same
GPU stays quiet for the cooldown after it fired. Defaults: a temperature within 5 °C of
its crit limit (at once), VRAM over 90 % for 5 s, power at cap (98 % of it) for 10 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.units import format_gib
from rocmpanel.monitor.sample import TEMP_SENSORS, GpuSample, Sample

if TYPE_CHECKING:
    from rocmpanel.base.settings import MonitorSettings


# The temperature sensors as the alerts and the plots name them (translated where shown).
SENSOR_NAMES = {
    "edge": QT_TRANSLATE_NOOP("alerts", "edge"),
    "junction": QT_TRANSLATE_NOOP("alerts", "junction"),
    "mem": QT_TRANSLATE_NOOP("alerts", "mem"),
}


def sensor_name(sensor: str) -> str:
    """A temperature sensor's name in the window's language."""
    return translate("alerts", SENSOR_NAMES.get(sensor, sensor))


class AlertKind(Enum):
    TEMPERATURE = "temperature"
    VRAM = "vram"
    POWER = "power"


@dataclass(frozen=True)
class AlertRules:
    """Thresholds; ``enabled`` False silences every alert."""

    enabled: bool = True
    temp_margin_c: float = 5.0
    vram_percent: float = 90.0
    vram_hold_s: float = 5.0
    power_cap_fraction: float = 0.98
    power_hold_s: float = 10.0
    cooldown_s: float = 300.0

    @classmethod
    def from_settings(cls, s: MonitorSettings) -> AlertRules:
        """The rules the user set (the same for this machine's GPUs and other nodes')."""
        return cls(
            enabled=s.alerts_enabled,
            temp_margin_c=s.alert_temp_margin_c,
            vram_percent=s.alert_vram_percent,
            vram_hold_s=s.alert_vram_hold_s,
            power_hold_s=s.alert_power_hold_s,
            cooldown_s=s.alert_cooldown_s,
        )


@dataclass(frozen=True)
class Alert:
    """One fired alert: what, on which GPU, when, and the sentence to show."""

    kind: AlertKind
    gpu_key: str
    t: float
    message: str


class AlertMonitor:
    """Feed it every sample with ``check``; it returns the alerts that fire now."""

    def __init__(self, rules: AlertRules | None = None) -> None:
        self.rules = rules or AlertRules()
        self._since: dict[tuple[str, AlertKind], float] = {}
        self._fired: dict[tuple[str, AlertKind], float] = {}

    def check(self, sample: Sample) -> list[Alert]:
        if not self.rules.enabled:
            self._since.clear()
            return []
        alerts: list[Alert] = []
        for gpu in sample.gpus:
            if gpu.asleep:
                self._clear(gpu.identity.key)
                continue
            for kind, hold_s, message in self._conditions(gpu):
                alert = self._hold(gpu.identity.key, kind, sample.t, hold_s, message)
                if alert is not None:
                    alerts.append(alert)
        return alerts

    def _clear(self, key: str) -> None:
        for kind in AlertKind:
            self._since.pop((key, kind), None)

    def _hold(
        self, key: str, kind: AlertKind, t: float, hold_s: float, message: str | None
    ) -> Alert | None:
        slot = (key, kind)
        if message is None:
            self._since.pop(slot, None)
            return None
        since = self._since.setdefault(slot, t)
        if t - since < hold_s:
            return None
        last = self._fired.get(slot)
        if last is not None and t - last < self.rules.cooldown_s:
            return None
        self._fired[slot] = t
        return Alert(kind, key, t, message)

    def _conditions(self, gpu: GpuSample) -> list[tuple[AlertKind, float, str | None]]:
        r = self.rules
        name = gpu.identity.name
        hot = None
        for sensor in TEMP_SENSORS:
            temp, crit = gpu.temp_c(sensor), gpu.crit_c(sensor)
            if temp is not None and crit is not None and temp >= crit - r.temp_margin_c:
                hot = translate(
                    "AlertMonitor", "{gpu}: {sensor} temperature {temp} °C, crit limit {crit} °C"
                ).format(
                    gpu=name, sensor=sensor_name(sensor), temp=f"{temp:.0f}", crit=f"{crit:.0f}"
                )
                break
        vram = None
        used, total = gpu.vram_used_bytes, gpu.vram_total_bytes
        if used is not None and total:
            percent = 100.0 * used / total
            if percent > r.vram_percent:
                vram = translate(
                    "AlertMonitor",
                    "{gpu}: VRAM {percent} % full for {seconds} s ({used} of {total})",
                ).format(
                    gpu=name,
                    percent=f"{percent:.0f}",
                    seconds=f"{r.vram_hold_s:.0f}",
                    used=format_gib(used),
                    total=format_gib(total),
                )
        power = None
        cap = gpu.power_cap_w
        if gpu.power_w is not None and cap and gpu.power_w >= r.power_cap_fraction * cap:
            power = translate(
                "AlertMonitor", "{gpu}: power at its cap ({power} of {cap} W) for {seconds} s"
            ).format(
                gpu=name,
                power=f"{gpu.power_w:.0f}",
                cap=f"{cap:.0f}",
                seconds=f"{r.power_hold_s:.0f}",
            )
        return [
            (AlertKind.TEMPERATURE, 0.0, hot),
            (AlertKind.VRAM, r.vram_hold_s, vram),
            (AlertKind.POWER, r.power_hold_s, power),
        ]
