"""Applying and undoing environment changes: one at a time, all or nothing, recoverable.

Every apply and undo holds the environment lock (``lock``: threads and processes) from the
read that its check compares against to the last journal write, so concurrent changes of
different variables all land, in every store and in the journal.

The undo journal is a write-ahead log. An apply:

1. finishes what an interrupted apply or undo left (:func:`recover`);
2. checks every plan (``preflight``: unchanged since read, writable, ``sh -n``) and that the
   backups folder is writable;
3. backs up what each store holds and writes the journal entry as *pending*, with each
   store's path, backup and before/after sha256, before any store is touched;
4. writes the stores (a failure puts back the ones already written);
5. marks the entry *complete*.

An undo marks the entry *undoing* before it restores anything. Killed at any point, the
next apply, undo, ``env`` command or editor load finds the entry that is not complete and
rolls it forward (every store already written: mark complete; an undo half done: finish
it) or back (restore the stores already written from their backups), so the stores end in
step with each other and with the journal; it also removes rocmpanel's own temp files of
writers that are gone. What recovery did is reported in one line.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from rocmpanel.base import paths
from rocmpanel.base.atomic import remove_stale_temp_files, stale_temp_files, temp_prefix
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.envvars import journal
from rocmpanel.envvars.lock import env_lock
from rocmpanel.envvars.plan import EnvChange, FilePlan
from rocmpanel.envvars.store import (
    BEFORE,
    WRITTEN,
    ApplyResult,
    EnvStore,
    StoreSnapshot,
    StoresRead,
    damaged_store_error,
    read_stores,
)

OnDamaged = Literal["raise", "move", "note"]
ChangeSource = Sequence[EnvChange] | Callable[[EnvStore, StoreSnapshot], Sequence[EnvChange]]


# ---- recovery ------------------------------------------------------------------------------


def _temp_places(stores: Mapping[str, EnvStore]) -> list[tuple[Path, str | None]]:
    """Where an interrupted apply or undo may leave its temp files: beside each store file,
    beside the journal, and in the backups folder (any name)."""
    journal_file = journal.journal_path()
    places: list[tuple[Path, str | None]] = [
        (journal_file.parent, journal_file.name),
        (paths.backups_dir(), None),
    ]
    for store in stores.values():
        places += store.temp_places()
    return places


def _needs_recovery(stores: Mapping[str, EnvStore]) -> bool:
    try:
        entries = journal.load()
    except PanelError:
        return True  # reported under the lock
    if any(entry["state"] != journal.COMPLETE for entry in entries):
        return True
    return any(stale_temp_files(folder, name) for folder, name in _temp_places(stores))


def recover(stores: Mapping[str, EnvStore], *, on_damaged: OnDamaged = "note") -> list[str]:
    """Finish or roll back an interrupted apply or undo and remove leftover temp files of
    writers that are gone; one line per thing done. Takes the lock only when there is work.

    ``on_damaged``: what a journal that cannot be read does: ``"note"`` (a line saying to
    move it aside), ``"raise"`` (its JournalError) or ``"move"`` (moved aside, and said so).
    """
    if not _needs_recovery(stores):
        return []
    with env_lock():
        return _recover_locked(stores, on_damaged)


def recover_and_read(stores: Mapping[str, EnvStore]) -> StoresRead:
    """:func:`recover`, then :func:`read_stores`; recovery's lines (or why it could not run)
    are the result's ``notes``. What the editor does on load."""
    try:
        notes = recover(stores)
    except PanelError as exc:
        notes = [exc.message]
    read = read_stores(stores)
    return replace(read, notes=tuple(notes))


def _remove_leftovers(stores: Mapping[str, EnvStore]) -> list[str]:
    removed: list[Path] = []
    for folder, name in _temp_places(stores):
        removed += remove_stale_temp_files(folder, name)
    if not removed:
        return []
    names = ", ".join(str(path) for path in removed[:3]) + (" …" if len(removed) > 3 else "")
    text = translate(
        "transaction",
        "Removed {count} leftover temporary file(s) of an interrupted write: {names}.",
    )
    return [text.format(count=len(removed), names=names)]


def _load_for(on_damaged: OnDamaged, notes: list[str]) -> list[journal.Entry] | None:
    """The journal's entries; a damaged journal raised, noted (None) or moved aside ([])."""
    try:
        return journal.load()
    except journal.JournalError as exc:
        if on_damaged == "raise":
            raise
        if on_damaged == "note":
            notes.append(exc.message)
            return None
        moved = journal.move_aside()
        notes.append(
            translate(
                "transaction",
                "The undo journal {path} could not be read ({why}); it was kept as "
                "{moved} and a new one was started (earlier changes can no longer be undone "
                "from rocmpanel).",
            ).format(path=exc.path, why=exc.why, moved=moved)
        )
        return []


def _recover_locked(stores: Mapping[str, EnvStore], on_damaged: OnDamaged) -> list[str]:
    notes = _remove_leftovers(stores)
    entries = _load_for(on_damaged, notes)
    if entries is None:
        return notes
    kept: list[journal.Entry] = []
    restored: set[str] = set()
    changed = False
    for entry in entries:
        if entry["state"] == journal.COMPLETE:
            kept.append(entry)
            continue
        changed = True
        note, outcome = _finish(stores, entry, restored)
        notes.append(note)
        if outcome is not None:
            kept.append(outcome)
    if changed:
        journal.save(kept)
    for key in sorted(restored):
        stores[key].after_change()
    return notes


def _finish(
    stores: Mapping[str, EnvStore], entry: journal.Entry, restored: set[str]
) -> tuple[str, journal.Entry | None]:
    """Roll one interrupted entry forward or back: (what was done, the entry to keep)."""
    records: list[dict[str, Any]] = entry["records"]
    undoing = entry["state"] == journal.UNDOING
    summary = entry.get("summary") or "?"
    what = (
        translate("transaction", "An interrupted undo of ({summary})")
        if undoing
        else translate("transaction", "An interrupted change ({summary})")
    ).format(summary=summary)
    missing = sorted({r["store"] for r in records if r["store"] not in stores})
    if missing:
        return (
            translate(
                "transaction",
                "{what} involves the {stores} store, which is not available here; "
                "it was left for later.",
            ).format(what=what, stores=", ".join(missing)),
            entry,
        )
    try:
        states = [stores[record["store"]].state(record) for record in records]
    except PanelError as exc:
        return translate("transaction", "{what} could not be checked: {error}").format(
            what=what, error=exc.message
        ), entry
    if not undoing and all(state == WRITTEN for state in states):
        done = translate(
            "transaction", "{what} had been written completely; it can be undone as usual."
        )
        return done.format(what=what), {**entry, "state": journal.COMPLETE}
    if not undoing and all(state == BEFORE for state in states):
        return translate(
            "transaction", "{what} had not been written yet; nothing was changed."
        ).format(what=what), None
    pairs = list(zip(records, states, strict=True))
    to_restore = [record for record, state in pairs if state == WRITTEN]
    failures = _restore_all(stores, to_restore)
    if failures:
        failed = (
            translate("transaction", "{what} could not be finished: {failures}")
            if undoing
            else translate("transaction", "{what} could not be rolled back: {failures}")
        )
        return failed.format(what=what, failures=" ".join(failures)), entry
    restored.update(record["store"] for record in to_restore)
    others = [record["path"] for record, state in pairs if state not in (WRITTEN, BEFORE)]
    paths = ", ".join(record["path"] for record in to_restore)
    if to_restore:
        note = (
            translate("transaction", "{what} was finished: {paths} restored.")
            if undoing
            else translate("transaction", "{what} was rolled back: {paths} restored.")
        ).format(what=what, paths=paths)
    else:
        note = (
            translate("transaction", "{what} was finished.")
            if undoing
            else translate("transaction", "{what} was rolled back.")
        ).format(what=what)
    if others:
        note += " " + translate(
            "transaction", "{paths} had been changed meanwhile and was left as it is."
        ).format(paths=", ".join(others))
    return note, None


def _restore_all(stores: Mapping[str, EnvStore], records: Sequence[dict[str, Any]]) -> list[str]:
    failures = []
    for record in reversed(records):
        try:
            stores[record["store"]].restore(record)
        except PanelError as exc:
            failures.append(exc.message)
    return failures


# ---- apply ---------------------------------------------------------------------------------


def _check_backups_writable() -> None:
    folder = paths.backups_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=temp_prefix("probe"), suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise PanelError(
            f"The backups folder {folder} is not writable ({exc.strerror or exc}). rocmpanel "
            "backs up every file before it changes it, so nothing was changed: make the "
            "folder writable and try again.",
            str(exc),
        ) from exc


def apply_plans(stores: Mapping[str, EnvStore], plans: Sequence[FilePlan]) -> ApplyResult:
    """Write every changed plan, or none (the editor's reviewed plans: a store that changed
    since it was read is an EnvConflictError)."""
    with env_lock():
        notes = _recover_locked(stores, "move")
        return _apply_locked(stores, plans, notes)


def apply_changes(
    stores: Mapping[str, EnvStore], targets: Sequence[str], changes: ChangeSource
) -> ApplyResult:
    """Read the ``targets`` stores, plan ``changes`` and write them, all under the lock, so a
    concurrent change is never lost (the CLI). ``changes`` may be a function of the store and
    what it holds (``--append`` adds to the value that is there now)."""
    from rocmpanel.envvars.catalogue import load_catalogue

    load_catalogue()  # parsed once, before the lock is taken
    with env_lock():
        notes = _recover_locked(stores, "move")
        plans = []
        for key in targets:
            store = stores[key]
            snapshot = store.read()
            if snapshot.problem:
                raise damaged_store_error(store, snapshot)
            wanted = changes(store, snapshot) if callable(changes) else changes
            plans.append(store.plan(snapshot, wanted))
        result = _apply_locked(stores, plans, notes)
    return replace(result, diff="".join(plan.diff for plan in plans))


def _apply_locked(
    stores: Mapping[str, EnvStore], plans: Sequence[FilePlan], notes: list[str]
) -> ApplyResult:
    todo = [plan for plan in plans if plan.changed]
    if not todo:
        return ApplyResult((), translate("transaction", "Nothing to change."), tuple(notes))
    for plan in todo:
        stores[plan.store].preflight(plan)
    entries = _load_for("move", notes) or []
    _check_backups_writable()
    protect = journal.referenced_backups(entries)
    records = [stores[plan.store].backup(plan, protect) for plan in todo]
    changes = sorted({change.describe() for plan in todo for change in plan.changes})
    entry: journal.Entry = {
        "id": uuid.uuid4().hex,
        "state": journal.PENDING,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "summary": "; ".join(changes),
        "records": records,
    }
    try:
        journal.save([*entries, entry])
    except PanelError as exc:
        raise PanelError(
            translate(
                "transaction", "The undo record could not be saved ({error}); nothing was changed."
            ).format(error=exc.message),
            exc.detail,
        ) from exc
    written: list[dict[str, Any]] = []
    try:
        for plan, record in zip(todo, records, strict=True):
            stores[plan.store].write(plan)
            written.append(record)
    except PanelError as exc:
        failures = _restore_all(stores, written)
        if failures:
            raise PanelError(
                exc.message
                + " "
                + translate(
                    "transaction",
                    "Restoring the stores already written also failed: {failures} The next "
                    "rocmpanel command will try again.",
                ).format(failures=" ".join(failures)),
                exc.detail,
            ) from exc
        with contextlib.suppress(PanelError):  # else recovery drops it: every store as before
            journal.save(entries)
        if written:
            exc.message += " " + translate(
                "transaction", "The stores already written were restored; nothing changed."
            )
        raise
    try:
        journal.save([*entries, {**entry, "state": journal.COMPLETE}])
    except PanelError as exc:
        notes.append(
            translate(
                "transaction",
                "The undo record could not be completed ({error}); the next rocmpanel "
                "command will complete it.",
            ).format(error=exc.message)
        )
    for plan in todo:
        stores[plan.store].after_change()
    targets = tuple(plan.target for plan in todo)
    message = translate("transaction", "Wrote {targets}.").format(targets=", ".join(targets))
    return ApplyResult(targets, message, tuple(notes))


# ---- undo ----------------------------------------------------------------------------------


def last_apply() -> str | None:
    """What :func:`undo_last` would undo ("the last apply" when the journal cannot say),
    or None when the journal holds no apply: the editor's Undo is disabled then. A journal
    that cannot be read counts as holding one, so that Undo explains the problem."""
    try:
        entries = journal.load()
    except PanelError:
        return translate("transaction", "the last apply")
    if not entries:
        return None
    return str(entries[-1].get("summary") or translate("transaction", "the last apply"))


def undo_last(stores: Mapping[str, EnvStore]) -> ApplyResult:
    """Restore what the last apply replaced; the journal entry is dropped only on success."""
    with env_lock():
        notes = _recover_locked(stores, "raise")
        return _undo_locked(stores, notes)


def _undo_locked(stores: Mapping[str, EnvStore], notes: list[str]) -> ApplyResult:
    entries = journal.load()
    if not entries:
        raise PanelError(translate("transaction", "There is no apply to undo."))
    entry = entries[-1]
    summary = entry.get("summary") or translate("transaction", "the last apply")
    if entry["state"] != journal.COMPLETE:
        raise PanelError(
            translate(
                "transaction",
                "The last change ({summary}) was interrupted and could not be finished or rolled "
                "back yet; nothing was restored.",
            ).format(summary=summary)
            + " "
            + " ".join(notes)
        )
    records: list[dict[str, Any]] = entry["records"]
    for record in records:
        if record["store"] not in stores:
            raise PanelError(
                translate(
                    "transaction",
                    "The last apply wrote the {store} store, which is not available "
                    "here; nothing was restored.",
                ).format(store=record["store"])
            )
        stores[record["store"]].check_restore(record)
    protect = journal.referenced_backups(entries)
    for record in records:
        stores[record["store"]].before_restore(record, protect)
    journal.save([*entries[:-1], {**entry, "state": journal.UNDOING}])
    failures = _restore_all(stores, records)
    if failures:
        raise PanelError(
            translate(
                "transaction",
                "Undo failed: {failures} The next rocmpanel command will try to finish it.",
            ).format(failures=" ".join(failures))
        )
    try:
        journal.save(entries[:-1])
    except PanelError as exc:
        notes.append(
            translate(
                "transaction",
                "The undo record could not be removed ({error}); the next rocmpanel "
                "command will remove it.",
            ).format(error=exc.message)
        )
    for record in records:
        stores[record["store"]].after_change()
    targets = tuple(str(record.get("path", record["store"])) for record in records)
    return ApplyResult(
        targets, translate("transaction", "Undid {summary}.").format(summary=summary), tuple(notes)
    )
