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


def _wire_lines(call: str) -> list[str]:
    """What ``_wire.<call>`` writes, run in a child as a worker would run it."""
    import subprocess
    import sys
    from pathlib import Path

    workers = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"
    code = f"import sys; sys.path.insert(0, {str(workers)!r}); import _wire; _wire.{call}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_check_events_from_the_wire_parse_typed() -> None:
    from rocmpanel.base.enums import CheckStatus
    from rocmpanel.jobs.protocol import CheckDone

    (line,) = _wire_lines(
        "check({'id': 'gemm', 'name': 'GEMM', 'status': 'pass', 'figure': '1.2 TFLOP/s'})"
    )
    event = parse_line(line)
    assert isinstance(event, CheckDone)
    assert (event.id, event.name, event.status) == ("gemm", "GEMM", CheckStatus.PASS)
    assert event.record["figure"] == "1.2 TFLOP/s"


def test_tokens_and_replies_carry_their_request_id() -> None:
    from rocmpanel.jobs.protocol import ReplyDone

    token_line, reply_line = _wire_lines(
        "token('Hel', request_id=7, count=2); _wire.reply(7, 'Hello', new_tokens=3)"
    )
    token = parse_line(token_line)
    assert isinstance(token, Token) and (token.request_id, token.count) == (7, 2)
    reply = parse_line(reply_line)
    assert isinstance(reply, ReplyDone) and reply.request_id == 7 and reply.text == "Hello"
    assert reply.data["new_tokens"] == 3


@pytest.mark.parametrize(
    "line",
    [
        '{"event": "check", "check": "not a mapping"}',
        '{"event": "check", "check": {"name": "no id"}}',
        '{"event": "telepathy", "x": 1}',
    ],
)
def test_malformed_or_unknown_events_are_raw_lines_not_errors(line: str) -> None:
    assert isinstance(parse_line(line), RawLine)


def test_an_unknown_check_status_is_a_failure() -> None:
    from rocmpanel.base.enums import CheckStatus
    from rocmpanel.jobs.protocol import CheckDone

    event = parse_line('{"event": "check", "check": {"id": "x", "status": "exploded"}}')
    assert isinstance(event, CheckDone) and event.status is CheckStatus.FAIL
