from __future__ import annotations

import json

import pytest

from rocmpanel.jobs.protocol import (
    LogLine,
    Progress,
    RawLine,
    Result,
    Token,
    WorkerError,
    encode_command,
    parse_line,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"event": "progress", "fraction": 0.5, "step": "x"}\n', Progress(0.5, "x")),
        ('{"event": "progress", "fraction": 7}', Progress(1.0, "")),
        ('{"event": "progress", "fraction": null}', Progress(None, "")),
        ('{"event": "log", "message": "m", "level": "warning"}', LogLine("m", "warning")),
        ('{"event": "result", "data": {"a": 1}}', Result({"a": 1})),
        ('{"event": "token", "text": "hi"}', Token("hi", {})),
        ("not json", RawLine("not json")),
        ("{bad", RawLine("{bad")),
        ("[1, 2]", RawLine("[1, 2]")),
        ('{"event": "mystery"}', RawLine('{"event": "mystery"}')),
        (
            '{"event": "progress", "fraction": "x"}',
            RawLine('{"event": "progress", "fraction": "x"}'),
        ),
    ],
)
def test_parse_line(line: str, expected: object) -> None:
    assert parse_line(line) == expected


def test_error_keeps_kind_detail_and_extra_fields() -> None:
    event = parse_line(
        json.dumps({"event": "error", "message": "OOM", "kind": "oom", "detail": "tb", "need": 3})
    )
    assert event == WorkerError("OOM", "oom", "tb", {"need": 3})


def test_huge_line_is_truncated_not_parsed() -> None:
    event = parse_line("{" + "x" * 2_000_000)
    assert isinstance(event, RawLine) and len(event.text) < 300


def test_encode_command_is_one_json_line() -> None:
    data = encode_command("generate", prompt="a\nb")
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == {"op": "generate", "prompt": "a\nb"}
