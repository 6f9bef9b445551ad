"""Alerts: hold times, cooldown, thresholds, asleep GPUs, switched off."""

from __future__ import annotations

from rocmpanel.monitor.alerts import AlertKind, AlertMonitor, AlertRules
from rocmpanel.monitor.sample import GpuIdentity, GpuSample, Sample

IDENT = GpuIdentity("0000:03:00.0", "card0", "0000:03:00.0", "1002:744c", "RX 7900 XT")


def tick(t: float, **figures: float | int | bool | None) -> Sample:
    return Sample(t, (GpuSample(IDENT, **{"asleep": False, **figures}),), None)  # type: ignore[arg-type]


def test_temperature_near_crit_fires_at_once_then_cools_down() -> None:
    monitor = AlertMonitor(AlertRules(cooldown_s=60.0))
    hot = {"temp_junction_c": 106.0, "crit_junction_c": 110.0}
    (alert,) = monitor.check(tick(0.0, **hot))
    assert alert.kind is AlertKind.TEMPERATURE and "junction" in alert.message
    assert monitor.check(tick(1.0, **hot)) == []  # cooldown
    assert monitor.check(tick(61.0, **hot))[0].kind is AlertKind.TEMPERATURE
    assert monitor.check(tick(200.0, temp_junction_c=104.9, crit_junction_c=110.0)) == []


def test_vram_must_stay_over_90_percent_for_5_s() -> None:
    monitor = AlertMonitor()
    full = {"vram_used_bytes": 95, "vram_total_bytes": 100}
    assert monitor.check(tick(0.0, **full)) == []
    assert monitor.check(tick(4.9, **full)) == []
    assert monitor.check(tick(5.0, **full))[0].kind is AlertKind.VRAM
    # A dip below the threshold restarts the hold.
    monitor2 = AlertMonitor()
    monitor2.check(tick(0.0, **full))
    monitor2.check(tick(3.0, vram_used_bytes=50, vram_total_bytes=100))
    assert monitor2.check(tick(6.0, **full)) == []
    assert monitor2.check(tick(11.0, **full))[0].kind is AlertKind.VRAM


def test_power_at_cap_for_10_s() -> None:
    monitor = AlertMonitor()
    capped = {"power_w": 289.0, "power_cap_w": 290.0}
    assert monitor.check(tick(0.0, **capped)) == []
    assert monitor.check(tick(9.0, **capped)) == []
    (alert,) = monitor.check(tick(10.0, **capped))
    assert alert.kind is AlertKind.POWER and "290 W" in alert.message
    assert AlertMonitor().check(tick(0.0, power_w=200.0, power_cap_w=290.0)) == []


def test_missing_figures_asleep_and_disabled_never_fire() -> None:
    monitor = AlertMonitor(AlertRules(vram_hold_s=0.0))
    assert monitor.check(tick(0.0, temp_edge_c=120.0)) == []  # no crit known
    assert monitor.check(tick(0.0, vram_used_bytes=99, vram_total_bytes=None)) == []
    assert monitor.check(tick(0.0, asleep=True, vram_used_bytes=99, vram_total_bytes=100)) == []
    off = AlertMonitor(AlertRules(enabled=False, vram_hold_s=0.0))
    assert off.check(tick(0.0, vram_used_bytes=99, vram_total_bytes=100)) == []
