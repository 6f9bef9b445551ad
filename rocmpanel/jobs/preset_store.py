"""The built-in presets (resources/presets.yaml) and the user's presets (one file each).

Re-exported by :mod:`rocmpanel.jobs.presets` (import from there). User presets live in
``config_dir()/presets`` as ``<id>.yaml``. Every write is atomic and backed up first, under
the folder's lock; a file that cannot be read is listed in :attr:`PresetStore.problems` and
never overwritten or removed by the panel.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from rocmpanel.base import paths
from rocmpanel.base.atomic import backup_file, write_atomic
from rocmpanel.base.errors import PanelError
from rocmpanel.base.locking import locked
from rocmpanel.base.resources import read_resource
from rocmpanel.jobs.preset_schema import (
    ID_MAX,
    ID_RE,
    NAME_MAX,
    NO_PRESET,
    RESERVED_IDS,
    Preset,
    PresetError,
    Problem,
    dump_preset,
    name_key,
    visible,
)
from rocmpanel.jobs.preset_yaml import parse_preset, parse_preset_list, read_preset_file

BUILTIN_FILE = "presets.yaml"
BACKUPS_KEEP = 10


@functools.lru_cache(maxsize=1)
def builtin_presets() -> tuple[Preset, ...]:
    """The built-ins from resources/presets.yaml (validated; a bad one is a bug: raises)."""
    return parse_preset_list(read_resource(BUILTIN_FILE), BUILTIN_FILE, builtin=True)


def slug(name: str) -> str:
    """An id made from a name: ``RDNA3 consumer (copy)`` -> ``rdna3-consumer-copy``."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:ID_MAX].strip("-")
    if text in RESERVED_IDS:  # a Windows device name cannot be a file name there
        return f"{text}-preset"
    return text if text and text != NO_PRESET else "preset"


def _is_id(ident: str) -> bool:
    """Whether ``ident`` could be a user preset's id (so ``<ident>.yaml`` is its file)."""
    return (
        len(ident) <= ID_MAX
        and ID_RE.fullmatch(ident) is not None
        and ident != NO_PRESET
        and ident not in RESERVED_IDS
    )


def _with_suffix(ident: str, number: int) -> str:
    tail = f"-{number}"
    return ident[: ID_MAX - len(tail)].rstrip("-") + tail


def _named(name: str, suffix: str) -> str:
    return name[: NAME_MAX - len(suffix)].rstrip() + suffix


def _file_in_the_way(folder: Path) -> Path | None:
    """The nearest existing path at or above ``folder`` when it is not a folder (a file
    where the presets folder or one of its parents should be), else None."""
    for path in (folder, *folder.parents):
        try:
            if path.exists():
                return None if path.is_dir() else path
        except OSError:
            return None
    return None


def _builtin_keys() -> tuple[set[str], dict[str, str]]:
    """The built-ins' ids, and their names (by :func:`name_key`) with the id of each."""
    builtins = builtin_presets()
    return {p.id for p in builtins}, {name_key(p.name): p.id for p in builtins}


def _read_user(path: Path, taken_ids: set[str], taken_names: dict[str, str]) -> Preset | Problem:
    """The user preset in ``path``, or the Problem that keeps it out: unreadable, not a
    regular file, an id that is not its file name, or an id or name already taken."""
    shown = visible(str(path))
    if path.is_symlink():
        return Problem(
            path, f"{shown}: file: is a symbolic link; presets are read from regular files only"
        )
    try:
        preset = read_preset_file(path)
    except PresetError as exc:
        return Problem(path, exc.message)
    clash = None
    if preset.id != path.stem:
        clash = (
            f"its id {preset.id!r} does not match the file name; rename the file "
            f"to {preset.id}.yaml"
        )
    elif preset.id in taken_ids:
        clash = f"the id {preset.id!r} is taken by another preset"
    elif name_key(preset.name) in taken_names:
        clash = f"the name {preset.name!r} is taken by {taken_names[name_key(preset.name)]!r}"
    if clash is not None:
        return Problem(path, f"{shown}: {clash}")
    return preset


@dataclass
class PresetStore:
    """Built-ins plus the user's presets in ``folder`` (default config_dir()/presets),
    one ``<id>.yaml`` each. Writes are atomic, backed up first and locked; a file that
    cannot be read is reported in ``problems`` and never overwritten."""

    folder: Path | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.folder if self.folder is not None else paths.config_dir() / "presets"

    # ---- reading -------------------------------------------------------------------------

    def _scan(self) -> tuple[list[Preset], list[Problem]]:
        """The readable user presets and the files that are not (by file name)."""
        taken_ids, taken_names = _builtin_keys()
        presets: list[Preset] = []
        problems: list[Problem] = []
        blocker = _file_in_the_way(self.root)
        if blocker is not None:
            # glob() finds nothing under a file and would say nothing: say why instead.
            problems.append(
                Problem(
                    blocker,
                    f"{blocker} is a file, not a folder, so presets in {self.root} cannot be "
                    "read or saved; move that file aside and try again",
                )
            )
            return presets, problems
        try:
            entries = sorted(self.root.glob("*.yaml"))
        except OSError as exc:
            problems.append(Problem(self.root, f"{visible(str(self.root))}: cannot be read: {exc}"))
            return presets, problems
        for path in entries:
            found = _read_user(path, taken_ids, taken_names)
            if isinstance(found, Problem):
                problems.append(found)
                continue
            taken_ids.add(found.id)
            taken_names[name_key(found.name)] = found.id
            presets.append(found)
        presets.sort(key=lambda p: (p.name.casefold(), p.id))
        return presets, problems

    def all(self) -> list[Preset]:
        """Built-ins first, then user presets by name; refreshes ``problems``."""
        users, problems = self._scan()
        self.problems = problems
        return [*builtin_presets(), *users]

    def get(self, ident: str) -> Preset:
        """By id or name (case-insensitive); PanelError naming the known ones.

        An id is looked up without reading every user file (a job start resolves its
        preset this way): the built-ins, then ``<ident>.yaml`` alone. A file there that
        cannot be used raises PanelError and is the one entry of ``problems``. Only a
        name (no such id) reads them all. The fast path does not compare the file's name
        with other user files' (``all()`` does; the panel never saves such a clash)."""
        for preset in builtin_presets():
            if preset.id == ident:
                return preset
        if _is_id(ident):
            path = self.root / f"{ident}.yaml"
            if path.is_symlink() or path.exists():
                found = _read_user(path, *_builtin_keys())
                if isinstance(found, Preset):
                    self.problems = []
                    return found
                self.problems = [found]
                raise PanelError(f"The preset {ident!r} cannot be used: {found.message}")
        every = self.all()
        for preset in every:
            if preset.id == ident:
                return preset
        wanted = ident.strip()
        for preset in every:
            if preset.id.casefold() == wanted.casefold() or name_key(preset.name) == name_key(
                wanted
            ):
                return preset
        known = ", ".join(p.id for p in every)
        raise PanelError(f"There is no preset {ident!r}. Known presets: {known}.")

    # ---- writing -------------------------------------------------------------------------

    def _lock(self, refused: str) -> AbstractContextManager[None]:
        return locked(self.root, refused=refused)

    def _checked(self, preset: Preset) -> Preset:
        """``preset`` as its file would read back (every value checked)."""
        file = f"{preset.id}.yaml"
        try:
            return parse_preset(dump_preset(preset), file)
        except PresetError as exc:
            problem = exc.problem.rstrip(".")
            raise PanelError(f"Preset not saved: {exc.field}: {problem}.") from exc

    def save(self, preset: Preset, *, replace: str | None = None) -> Preset:
        """Create or update a user preset (``replace``: the id it had, when renamed);
        PanelError for a built-in id, a clash of id or name, or a bad value.

        Saving a preset whose id exists (and ``replace`` None or that id) updates it.
        """
        checked = self._checked(preset)
        for builtin in builtin_presets():
            if builtin.id in (checked.id, replace):
                raise PanelError(
                    f"Preset not saved: {builtin.id!r} is a built-in preset and cannot be "
                    "changed; duplicate it and edit the copy."
                )
            if name_key(builtin.name) == name_key(checked.name):
                raise PanelError(
                    f"Preset not saved: the name {checked.name!r} is a built-in preset's; "
                    "choose another name."
                )
        with self._lock("Preset not saved"):
            return self._write(checked, replace)

    def _write(self, preset: Preset, replace: str | None) -> Preset:
        users, problems = self._scan()
        self.problems = problems
        target = self.root / f"{preset.id}.yaml"
        for problem in problems:
            if problem.path == target:
                raise PanelError(
                    f"Preset not saved: {target} exists but cannot be read, and rocmpanel "
                    "never overwrites such a file; fix or move it, or choose another id."
                )
        mine = replace if replace is not None else preset.id
        for other in users:
            if other.id == mine:
                continue
            if other.id == preset.id:
                raise PanelError(
                    f"Preset not saved: the id {preset.id!r} is taken by {other.name!r}; "
                    "choose another id."
                )
            if name_key(other.name) == name_key(preset.name):
                raise PanelError(
                    f"Preset not saved: the name {preset.name!r} is taken by the preset "
                    f"{other.id!r}; choose another name."
                )
        if replace is not None and replace != preset.id:
            old = self.root / f"{replace}.yaml"
            if not any(u.id == replace for u in users):
                raise PanelError(
                    f"Preset not saved: there is no user preset {replace!r} to rename."
                )
        else:
            old = None
        backup_file(target, paths.backups_dir(), BACKUPS_KEEP)
        write_atomic(target, dump_preset(preset).encode("utf-8"))
        if old is not None:
            backup_file(old, paths.backups_dir(), BACKUPS_KEEP)
            try:
                old.unlink()
            except OSError as exc:
                raise PanelError(
                    f"The preset was saved as {target.name}, but its old file {old} could not "
                    f"be removed ({exc.strerror or exc}); remove it by hand."
                ) from exc
        return dataclasses.replace(preset, builtin=False, path=target)

    def delete(self, ident: str) -> None:
        """Delete a user preset (backed up first); PanelError for a built-in. The preset is
        looked up under the lock, so a save or rename by another process in between cannot
        make it delete a file that no longer holds this preset."""
        with self._lock("Preset not deleted"):
            preset = self.get(ident)
            if preset.builtin or preset.path is None:
                raise PanelError(f"{preset.name!r} is a built-in preset and cannot be deleted.")
            backup_file(preset.path, paths.backups_dir(), BACKUPS_KEEP)
            try:
                preset.path.unlink()
            except FileNotFoundError:
                return
            except OSError as exc:
                raise PanelError(
                    f"Preset not deleted: {preset.path} could not be removed "
                    f"({exc.strerror or exc})."
                ) from exc

    def _free(self, ident: str, name: str) -> tuple[str, str]:
        """``ident``/``name``, or the first ``-N`` / `` (N)`` variant no preset uses."""
        every = self.all()
        ids = {p.id for p in every} | {p.path.stem for p in self.problems}
        names = {name_key(p.name) for p in every}
        number = 1
        new_id, new_name = ident, name
        while new_id in ids or name_key(new_name) in names:
            number += 1
            new_id = _with_suffix(ident, number)
            new_name = _named(name, f" ({number})")
        return new_id, new_name

    def duplicate(self, ident: str, name: str | None = None) -> Preset:
        """Copy any preset into a new user preset ("<name> (copy)" by default)."""
        source = self.get(ident)
        wanted = name if name is not None else _named(source.name, " (copy)")
        new_id, new_name = self._free(slug(wanted), wanted)
        copy = dataclasses.replace(source, id=new_id, name=new_name, builtin=False, path=None)
        return self.save(copy)

    def import_file(self, path: Path) -> Preset:
        """Read, validate and add a preset file (a clash of id/name gets a new one)."""
        preset = read_preset_file(path)
        new_id, new_name = self._free(preset.id, preset.name)
        return self.save(dataclasses.replace(preset, id=new_id, name=new_name, path=None))

    def export(self, ident: str, path: Path) -> None:
        """Write a preset (built-in or user) as a preset file, atomically."""
        preset = self.get(ident)
        backup_file(path, paths.backups_dir(), BACKUPS_KEEP)
        write_atomic(path, dump_preset(preset).encode("utf-8"))
