"""``rocmpanel chat``'s declarations (no worker, no torch)."""

from __future__ import annotations

import pytest

from rocmpanel.base.enums import Device
from rocmpanel.base.settings import ChatSettings, option_of
from rocmpanel.chat import cli


def test_device_choices_are_every_device_and_the_cuda_alias() -> None:
    assert {d.value for d in Device} | {"cuda"} == set(cli.DEVICE_CHOICES)
    assert len(cli.DEVICE_CHOICES) == len(set(cli.DEVICE_CHOICES))
    assert {Device.parse(choice) for choice in cli.DEVICE_CHOICES} == set(Device)


def test_number_options_are_held_to_the_declared_ranges(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rocmpanel.shell.cli import build_parser

    parser = build_parser()
    base = ["chat", "--model", "/nowhere"]
    for bad in (["--context", "-1"], ["--temperature", "nan"], ["--max-new-tokens", "0"]):
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args(base + bad)
        assert exit_info.value.code == 2
        assert "is outside" in capsys.readouterr().err
    upper = option_of(ChatSettings, "max_new_tokens").maximum
    args = parser.parse_args([*base, "--max-new-tokens", str(int(upper or 0)), "--seed", "-1"])
    assert args.max_new_tokens == upper and args.seed == -1
