"""base.units: the fixed-unit memory formatters."""

from __future__ import annotations

from rocmpanel.base.units import MIB, format_gib, format_mib


def test_format_mib_is_always_mib_and_groups_thousands() -> None:
    assert format_mib(1536 * MIB) == "1,536 MiB"
    assert format_mib(512 * 1024) == "0 MiB"
    assert format_mib(3 * MIB + MIB // 2, digits=1) == "3.5 MiB"
    assert format_mib(None) == "n/a"


def test_format_gib_is_always_gib() -> None:
    assert format_gib(3 * 2**29) == "1.5 GiB"
    assert format_gib(None) == "n/a"
