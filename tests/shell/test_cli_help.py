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


def _bare_options(root: argparse.ArgumentParser) -> list[str]:
    """Each argument of every parser that has no help text, as "<command> <option>"; -h and
    the list of subcommands (each has its own help line) need none."""
    parsers = [("rocmpanel", root), *((p, parser) for p, parser, _h in _walk(root, "rocmpanel"))]
    return [
        f"{path} {a.option_strings[0] if a.option_strings else a.dest}"
        for path, parser in parsers
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and not (a.help or "").strip()
    ]


def test_every_option_of_every_parser_has_help() -> None:
    """Options and positional arguments alike: `rocmpanel env --help` explains ACTION."""
    assert _bare_options(build_parser()) == []


def test_a_bare_option_in_a_subcommand_is_found() -> None:
    root = build_parser()
    commands = dict((p, parser) for p, parser, _h in _walk(root, "rocmpanel"))
    commands["rocmpanel torch history"].add_argument("--bare")
    assert _bare_options(root) == ["rocmpanel torch history --bare"]
