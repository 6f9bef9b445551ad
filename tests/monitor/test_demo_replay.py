"""The demo's past minutes: read through the real sysfs source from a private tree,
deterministic, in time order, and ending before ``now``."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rocmpanel.machine import demo
from rocmpanel.monitor.demo_replay import past_samples

NOW = 1_800_000_000.0 + 60.0  # phase 60 s for the first GPU, 0 s for the second


def test_past_samples_are_the_timeline_read_back_exactly() -> None:
    samples = past_samples(NOW, minutes=1.0, step_s=5.0)
    assert [s.t for s in samples] == [NOW - 60.0 + 5.0 * k for k in range(12)]
    assert all(s.host is None and s.processes == () for s in samples)
    first = samples[9]  # NOW - 15 s: phase 45 s, a generation burst on the first GPU
    assert first.t == NOW - 15.0
    rx7900, rx6900 = first.gpus
    assert (rx7900.identity.key, rx7900.identity.gfx) == ("0000:03:00.0", "gfx1100")
    assert rx7900.busy_percent == 97.0
    assert rx7900.vram_used_bytes == 14173388800
    assert (rx7900.temp_edge_c, rx7900.temp_junction_c, rx7900.temp_mem_c) == (67.0, 76.0, 78.0)
    assert rx7900.power_w == 272.0 and rx7900.power_cap_w == 290.0
    assert (rx7900.sclk_mhz, rx7900.mclk_mhz) == (2219.0, 1249.0)
    assert rx7900.fan_rpm == 940
    assert rx7900.crit_junction_c == 110.0
    assert rx7900.link == "16.0 GT/s x16"
    assert (rx6900.identity.key, rx6900.busy_percent, rx6900.sclk_mhz) == (
        "0000:0c:00.0",
        2.0,
        500.0,
    )


def test_the_same_time_gives_the_same_samples() -> None:
    assert past_samples(NOW, minutes=0.5, step_s=10.0) == past_samples(
        NOW, minutes=0.5, step_s=10.0
    )


def test_no_minutes_give_no_samples_and_the_private_tree_is_removed() -> None:
    before = set(Path(tempfile.gettempdir()).glob("rocmpanel-demo-past-*"))
    assert past_samples(NOW, minutes=0.0) == []
    assert len(past_samples(NOW, minutes=0.1, step_s=2.0)) == 3
    assert set(Path(tempfile.gettempdir()).glob("rocmpanel-demo-past-*")) == before


def test_the_default_covers_ten_minutes_every_two_seconds() -> None:
    recording = demo.load_recording()
    samples = past_samples(NOW, recording=recording)
    assert len(samples) == 300
    assert samples[0].t == NOW - 600.0 and samples[-1].t == NOW - 2.0
