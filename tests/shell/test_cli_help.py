"""Every parser of the ``rocmpanel`` command line says what it does in ``--help``.

The test walks the whole parser tree built by ``shell.cli.build_parser``: each subcommand
needs a one-line ``help`` (shown in its parent's list of commands) and a ``description``
(shown by its own ``--help``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from rocmpanel.shell.cli import build_parser


def _walk(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, argparse.ArgumentParser, str | None]]:
    """(command path, parser, its help line in the parent's list) for every subparser."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, child in action.choices.items():
            yield f"{path} {name}", child, helps.get(name)
            yield from _walk(child, f"{path} {name}")


def test_the_walk_finds_every_command() -> None:
    found = {path for path, _parser, _help in _walk(build_parser(), "rocmpanel")}
    assert {
        "rocmpanel doctor",
        "rocmpanel probe",
        "rocmpanel env",
        "rocmpanel data",
        "rocmpanel telemetry",
        "rocmpanel chat",
        "rocmpanel torch",
        "rocmpanel torch plan",
        "rocmpanel torch history",
    } <= found


def test_every_parser_has_a_description_and_a_help_line() -> None:
    root = build_parser()
    assert root.description
    missing = []
    for path, parser, help_line in _walk(root, "rocmpanel"):
        if not (parser.description or "").strip():
            missing.append(f"{path}: no description")
        if not (help_line or "").strip():
            missing.append(f"{path}: no help line")
    assert missing == []


def test_every_argument_of_these_commands_has_help() -> None:
    """The positional arguments too: `rocmpanel env --help` explains ACTION."""
    commands = dict((p, parser) for p, parser, _h in _walk(build_parser(), "rocmpanel"))
    for path in ("rocmpanel doctor", "rocmpanel probe", "rocmpanel env", "rocmpanel data"):
        bare = [
            a.dest
            for a in commands[path]._actions
            if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()
        ]
        assert bare == [], path
