"""The Monitor's sampling interval range, taken from its one declaration.

``MonitorSettings.interval_ms`` declares the range (100 ms to 5 s); the sampler clamps to
it, the toolbar's spin box offers it, and the history sizes its full-resolution tier for
the fastest interval. Nothing else spells the figures out.
"""

from __future__ import annotations

from rocmpanel.base.settings import MonitorSettings, option_of


def _declared_range_ms() -> tuple[int, int]:
    option = option_of(MonitorSettings, "interval_ms")
    if option.minimum is None or option.maximum is None:
        raise TypeError("MonitorSettings.interval_ms must declare its minimum and maximum")
    return int(option.minimum), int(option.maximum)


MIN_INTERVAL_MS, MAX_INTERVAL_MS = _declared_range_ms()
MIN_INTERVAL_S = MIN_INTERVAL_MS / 1000.0
