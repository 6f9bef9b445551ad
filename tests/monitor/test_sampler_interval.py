"""The sampler's interval rule (pure; the thread itself is tested in tests/gui)."""

from __future__ import annotations

from rocmpanel.monitor.sampler import effective_interval


def test_interval_is_clamped_and_slower_when_hidden() -> None:
    assert effective_interval(500, hidden=False) == 500
    assert effective_interval(10, hidden=False) == 100
    assert effective_interval(60_000, hidden=False) == 5000
    assert effective_interval(500, hidden=True) == 2000
    assert effective_interval(5000, hidden=True) == 5000
