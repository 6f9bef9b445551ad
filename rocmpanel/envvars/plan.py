"""Pure planning of an environment change set: what each store's contents become, and the diff.

A plan is made from what a store read and the requested changes; nothing is written here.
Every value is checked against the catalogue first, so an invalid value never gets into a
plan (and therefore never reaches a disk or the registry).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars import formats as env_formats
from rocmpanel.envvars.catalogue import (
    NAME_RE,
    Catalogue,
    Status,
    list_separator,
    load_catalogue,
)


class ValueRefusedError(PanelError):
    """A value the catalogue refuses (the CLI exits with status 2)."""


@dataclass(frozen=True)
class EnvChange:
    """Set ``name`` to ``value``, or unset it when ``value`` is None."""

    name: str
    value: str | None

    def describe(self) -> str:
        return f"unset {self.name}" if self.value is None else f"{self.name}={self.value}"


@dataclass(frozen=True)
class FilePlan:
    """One store's contents before and after (None = absent), with a readable diff and
    ``warnings``: what may not work as expected once written (shown with the diff, never a
    refusal; e.g. a Windows Path near its length limit)."""

    store: str
    target: str
    before: bytes | None
    after: bytes | None
    changes: tuple[EnvChange, ...]
    diff: str
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after


def merge_changes(changes: Iterable[EnvChange]) -> tuple[EnvChange, ...]:
    """One change per variable, the last one winning, in first-seen order."""
    latest: dict[str, EnvChange] = {}
    for change in changes:
        latest[change.name] = change
    return tuple(latest.values())


def check_changes(
    changes: Iterable[EnvChange], platform: str, catalogue: Catalogue | None = None
) -> tuple[EnvChange, ...]:
    """The merged changes, or PanelError listing every refused value and why."""
    catalogue = catalogue or load_catalogue()
    merged = merge_changes(changes)
    problems: list[str] = []
    for change in merged:
        if change.value is None:
            if NAME_RE.fullmatch(change.name) is None:
                problems.append(f"{change.name!r} is not a usable variable name.")
            continue
        verdict = catalogue.validate(change.name, change.value, platform)
        if verdict.status is Status.INVALID:
            problems.append(verdict.message)
    if problems:
        raise ValueRefusedError("Refused: " + " ".join(problems), "\n".join(problems))
    return merged


def reference_names(
    changes: Iterable[EnvChange], platform: str, catalogue: Catalogue | None = None
) -> frozenset[str]:
    """The changed names whose values keep ``$NAME`` references (paths and PATH-like lists,
    on Linux); every other value is stored literally."""
    if platform == "windows":
        return frozenset()
    catalogue = catalogue or load_catalogue()
    names = set()
    for change in changes:
        info = catalogue.lookup(change.name)
        if info is not None and info.takes_references:
            names.add(change.name)
    return frozenset(names)


def decode(data: bytes | None) -> str | None:
    """Bytes -> text that encodes back to exactly the same bytes."""
    return None if data is None else data.decode("utf-8", "surrogateescape")


def encode(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogateescape")


def _diff_line(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def text_diff(before: str | None, after: str | None, label: str) -> str:
    """Unified diff of two versions of ``label`` ('' when equal)."""
    if before == after:
        return ""
    old_lines = env_formats.split_lines(before or "")
    new_lines = env_formats.split_lines(after or "")
    old_lines = [_diff_line(line) for line in old_lines]
    new_lines = [_diff_line(line) for line in new_lines]
    header_old = label if before is not None else "/dev/null"
    header_new = label if after is not None else "/dev/null"
    return "".join(
        difflib.unified_diff(old_lines, new_lines, f"{header_old} (now)", f"{header_new} (new)")
    )


Renderer = Callable[[str | None, Sequence[tuple[str, str | None]], Collection[str]], str | None]


def plan_text_file(
    store: str,
    target: str,
    before: bytes | None,
    changes: Iterable[EnvChange],
    render: Renderer,
    platform: str,
    catalogue: Catalogue | None = None,
) -> FilePlan:
    """Plan a text file store: check the values, render the new text, diff it."""
    merged = check_changes(changes, platform, catalogue)
    old_text = decode(before)
    refs = reference_names(merged, platform, catalogue)
    try:
        new_text = render(old_text, [(c.name, c.value) for c in merged], refs)
    except env_formats.BlockError as exc:
        raise PanelError(f"Cannot edit {target}: {exc}.", str(exc)) from exc
    after = encode(new_text)
    return FilePlan(store, target, before, after, merged, text_diff(old_text, new_text, target))


def plan_environment_d(target: str, before: bytes | None, changes: Iterable[EnvChange]) -> FilePlan:
    return plan_text_file(
        "environment.d", target, before, changes, env_formats.render_environment_d, "linux"
    )


def plan_profile(target: str, before: bytes | None, changes: Iterable[EnvChange]) -> FilePlan:
    return plan_text_file("profile", target, before, changes, env_formats.render_profile, "linux")


def list_entries(value: str, platform: str) -> list[str]:
    """A PATH-like value as its entries."""
    return env_formats.split_list(value, list_separator(platform))


def join_entries(entries: Sequence[str], platform: str) -> str:
    return env_formats.join_list(entries, list_separator(platform))


def with_entry(value: str, entry: str, platform: str, *, first: bool = False) -> str:
    """``value`` with ``entry`` added (at the front when ``first``) unless already present."""
    entries = list_entries(value, platform)
    if entry in entries:
        return value
    entries = [entry, *entries] if first else [*entries, entry]
    return join_entries(entries, platform)


def without_entry(value: str, entry: str, platform: str) -> str:
    """``value`` with every occurrence of ``entry`` removed; the rest kept as is."""
    return join_entries([e for e in list_entries(value, platform) if e != entry], platform)
