"""Figures 3 and 4 of benchmarks/faults.py: damaged files at start-up, and bad input.

A damaged-file case is a fresh private home with one file damaged; every command that reads
it runs in a home of its own (so each command meets the damage, not another command's
repair). A run is clean when it ends by itself, not with the CLI's internal-error code 70,
prints no traceback, and, when it fails where a healthy home does not fail the same way,
names the damaged file. The smoke test must exit 0. The user's bytes must still exist
somewhere (in place, or moved aside) after every run.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from _faults_common import (
    BLOCK_BEGIN,
    BLOCK_END,
    PY,
    USER_PROFILE,
    Home,
    Ran,
    envd_value,
    make_fifo,
    parse_envd,
    run,
    write,
)

HERE = Path(__file__).resolve().parent

COMMANDS: dict[str, tuple[str, ...]] = {
    "smoke test": ("--smoke-test",),
    "env list": ("env", "list"),
    "env set": ("env", "set", "RPBENCH_X", "1"),
    "env undo": ("env", "undo"),
    "torch history": ("torch", "history"),
    "torch envs": ("torch", "envs"),
    "doctor": ("doctor",),
    "telemetry": ("telemetry", "--count", "1", "--json"),
}
SMOKE_TIMEOUT = 40.0  # the smoke test builds every tab: give a loaded machine time
TIMEOUT = 20.0


def _garbage(size: int, seed: int = 7) -> bytes:
    """Deterministic bytes that are no format at all."""
    out = bytearray()
    block = seed.to_bytes(4, "little")
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])


# ---- seeded databases -----------------------------------------------------------------------


@dataclass
class Seeds:
    """Healthy databases full of rows (made once, by rocmpanel's own stores)."""

    files: dict[str, bytes] = field(default_factory=dict)
    problem: str = ""


def make_seeds(parent: Path) -> Seeds:
    home = Home.make(parent, "seed")
    seeds = Seeds()
    done = subprocess.run(
        [PY, str(HERE / "_faults_seed.py")],
        env=home.env(),
        cwd=str(home.root),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        seeds.problem = f"could not seed the databases: {lines[-1]}"
    for name in ("rocmpanel.sqlite3", "validation.sqlite3", "chat.sqlite3"):
        path = home.data / name
        if path.is_file():
            seeds.files[name] = path.read_bytes()
    home.remove()
    return seeds


def _latest(module: str) -> int:
    """The newest schema version of a store (2 when it cannot be asked)."""
    try:
        from importlib import import_module

        from rocmpanel.base.sqlite import latest_version

        return int(latest_version(import_module(module).migrations(None)))
    except Exception:  # the benchmark measures; a moved helper must not stop it
        return 2


def wrong_schema(path: Path, tables: Sequence[str], version: int) -> None:
    """A real sqlite file at the current schema version whose tables have other columns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as db:
        for table in tables:
            db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, junk TEXT)")
            db.execute(f"INSERT INTO {table} (junk) VALUES ('from another program')")
        db.execute(f"PRAGMA user_version = {version}")
        db.commit()


# ---- damaged-file cases --------------------------------------------------------------------

Plant = Callable[[Home, Seeds], None]


@dataclass
class Case:
    name: str
    names: tuple[str, ...]  # any of these in the output names the damaged file
    plant: Plant
    quick: tuple[str, ...] = ()  # the commands of the quick run (empty: not in it)
    relevant: tuple[str, ...] = tuple(COMMANDS)
    kept: Callable[[Home], Path] | None = None  # the file whose planted bytes must survive
    in_place: bool = False  # the bytes must stay where they are, unchanged
    expect: dict[str, str] = field(default_factory=dict)  # command -> text its output shows


def _settings(home: Home) -> Path:
    return home.config / "settings.yaml"


def _db(name: str) -> Callable[[Home], Path]:
    return lambda home: home.data / name


def _plant_bytes(where: Callable[[Home], Path], data: bytes) -> Plant:
    return lambda home, seeds: write(where(home), data)


def _plant_fifo(where: Callable[[Home], Path]) -> Plant:
    return lambda home, seeds: make_fifo(where(home))


def _plant_seed(name: str, how: str) -> Plant:
    def plant(home: Home, seeds: Seeds) -> None:
        data = seeds.files.get(name)
        if data is None:
            raise RuntimeError(seeds.problem or f"no seeded {name}")
        if how == "truncated":
            data = data[: len(data) // 2]
        write(home.data / name, data)

    return plant


def _plant_wrong_schema(name: str) -> Plant:
    def plant(home: Home, seeds: Seeds) -> None:
        tables: tuple[str, ...]
        if name == "validation.sqlite3":
            tables = ("validation_runs", "validation_checks")
            version = _latest("rocmpanel.pytorch.validation_store")
        elif name == "chat.sqlite3":
            tables = ("chat_conversations", "chat_messages", "chat_recent_models")
            version = _latest("rocmpanel.chat.store")
        else:
            tables = ("validation_runs", "validation_checks", "chat_conversations")
            tables += ("chat_messages", "chat_recent_models")
            version = 0
        wrong_schema(home.data / name, tables, version)

    return plant


def _plant_newer(name: str) -> Plant:
    def plant(home: Home, seeds: Seeds) -> None:
        _plant_seed(name, "whole")(home, seeds)
        with closing(sqlite3.connect(home.data / name)) as db:
            db.execute("PRAGMA user_version = 99")
            db.commit()

    return plant


def _env_record(home: Home, name: str, data: bytes) -> None:
    folder = home.data / "envs" / name
    write(folder / "rocmpanel-env.json", data)
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    python = folder / "bin" / "python"
    if not python.exists():
        python.symlink_to(PY)


def _plant_record(data: bytes) -> Plant:
    def plant(home: Home, seeds: Seeds) -> None:
        good = {
            "name": "good-env",
            "created_at": 1_700_000_000.0,
            "build_id": "rocm6.2",
            "torch_version": "2.5.1+rocm6.2",
            "index_url": "https://download.pytorch.org/whl/rocm6.2",
            "installed": {"torch": "2.5.1+rocm6.2"},
            "job_env": {},
        }
        _env_record(home, "good-env", json.dumps(good).encode())
        _env_record(home, "broken-env", data)

    return plant


def _record(home: Home) -> Path:
    return home.data / "envs" / "broken-env" / "rocmpanel-env.json"


def _profile(home: Home) -> Path:
    return home.profile


def _envd(home: Home) -> Path:
    return home.envd


def _journal(home: Home) -> Path:
    return home.journal


def _session(home: Home) -> Path:
    return home.config / "session_env.json"


def _interpreters(home: Home) -> Path:
    return home.config / "interpreters.json"


def _plant_backups_file(home: Home, seeds: Seeds) -> None:
    write(home.data / "backups", b"a file where the backups folder should be\n")


SETTINGS_TYPO = (
    f"workload_python: {PY}\ntelemetry_interval_ms 500\nmy_future_key: kept\n"
).encode()
SETTINGS_WRONG_TYPE = (
    f"telemetry_interval_ms: abc\nworkload_python: {PY}\nmy_future_key: kept\n"
).encode()
SETTINGS_HEALTHY = (
    f"workload_python: {PY}\ntelemetry_interval_ms: 750\nmy_future_key: kept\n"
).encode()
BROKEN_MARKERS = (
    USER_PROFILE
    + (
        f"{BLOCK_BEGIN}\nexport RPBENCH_A=1\n{BLOCK_BEGIN}\nexport EDITOR=nano\n{BLOCK_END}\n"
    ).encode()
)
BEGIN_ONLY = USER_PROFILE + f"{BLOCK_BEGIN}\nexport RPBENCH_A=1\nexport LANG=C\n".encode()

SETTINGS_CMDS = ("smoke test", "env list", "torch envs", "telemetry")
DB_CMDS = ("smoke test", "torch history")
ENV_CMDS = ("smoke test", "env list", "env set", "env undo", "doctor")


def cases() -> list[Case]:
    s, q = SETTINGS_CMDS, ("smoke test", "env list")
    out = [
        Case(
            "settings.yaml with a YAML typo",
            ("settings.yaml",),
            _plant_bytes(_settings, SETTINGS_TYPO),
            q,
            s,
            _settings,
        ),
        Case(
            "settings.yaml that is a list",
            ("settings.yaml",),
            _plant_bytes(_settings, b"- telemetry_interval_ms\n- 500\n"),
            (),
            s,
            _settings,
        ),
        Case(
            "settings.yaml with a wrong type",
            ("settings.yaml",),
            _plant_bytes(_settings, SETTINGS_WRONG_TYPE),
            (),
            s,
            _settings,
        ),
        Case("settings.yaml is a FIFO", ("settings.yaml",), _plant_fifo(_settings), q, s),
        Case(
            "settings.yaml of binary garbage",
            ("settings.yaml",),
            _plant_bytes(_settings, _garbage(2048)),
            (),
            s,
            _settings,
        ),
        Case(
            "settings.yaml of 8 MiB",
            ("settings.yaml",),
            _plant_bytes(_settings, b"# a comment line\n" * (8 * 1024 * 1024 // 17)),
            (),
            s,
            _settings,
        ),
        Case(
            "settings.yaml healthy, with a key of a newer version",
            ("settings.yaml",),
            _plant_bytes(_settings, SETTINGS_HEALTHY),
            ("smoke test",),
            s,
            _settings,
            in_place=True,
        ),
    ]
    for db, quick_how in (
        ("rocmpanel.sqlite3", ""),
        ("validation.sqlite3", "truncated"),
        ("chat.sqlite3", "garbage"),
    ):
        where = _db(db)
        out += [
            Case(
                f"{db} truncated",
                (db,),
                _plant_seed(db, "truncated"),
                DB_CMDS if quick_how == "truncated" else (),
                DB_CMDS,
                where,
            ),
            Case(
                f"{db} of garbage",
                (db,),
                _plant_bytes(where, _garbage(8192, len(db))),
                ("smoke test",) if quick_how == "garbage" else (),
                DB_CMDS,
                where,
            ),
            Case(f"{db} empty", (db,), _plant_bytes(where, b""), (), DB_CMDS),
            Case(f"{db} with a wrong schema", (db,), _plant_wrong_schema(db), (), DB_CMDS, where),
        ]
    out.append(
        Case(
            "validation.sqlite3 from a newer rocmpanel (schema 99)",
            ("validation.sqlite3",),
            _plant_newer("validation.sqlite3"),
            (),
            DB_CMDS,
            _db("validation.sqlite3"),
        )
    )
    j = ("env list", "env set", "env undo", "smoke test")
    out += [
        Case(
            "env_undo.json of garbage",
            ("env_undo.json",),
            _plant_bytes(_journal, b'{"version": 1, "entries": [\x00\xff garbage'),
            ("env undo", "env set"),
            j,
            _journal,
        ),
        Case(
            "env_undo.json of a wrong shape",
            ("env_undo.json",),
            _plant_bytes(_journal, b'{"version": 1, "entries": {"a": 1}}'),
            (),
            j,
            _journal,
        ),
        Case(
            "env_undo.json with malformed entries",
            ("env_undo.json",),
            _plant_bytes(_journal, b'{"version": 1, "entries": [5, {"records": "x"}]}'),
            (),
            j,
            _journal,
        ),
        Case(
            "env_undo.json that is a list",
            ("env_undo.json",),
            _plant_bytes(_journal, b"[1, 2, 3]\n"),
            (),
            j,
            _journal,
        ),
        Case(
            "session_env.json of garbage",
            ("session_env.json",),
            _plant_bytes(_session, b"\xff\xfe{ not json"),
            (),
            j,
            _session,
        ),
        Case(
            "session_env.json of a wrong shape",
            ("session_env.json",),
            _plant_bytes(_session, b'{"variables": ["A", 1]}'),
            (),
            j,
            _session,
        ),
    ]
    r = ("torch envs", "smoke test", "doctor")
    expect = {"torch envs": "good-env"}
    out += [
        Case(
            "managed-env record with installed: 5",
            ("rocmpanel-env.json", "broken-env"),
            _plant_record(b'{"name": "broken-env", "created_at": 1700000001, "installed": 5}'),
            ("torch envs",),
            r,
            _record,
            expect=expect,
        ),
        Case(
            'managed-env record with created_at: "abc"',
            ("rocmpanel-env.json", "broken-env"),
            _plant_record(
                b'{"name": "broken-env", "created_at": "abc", "installed": {"torch": "2.4"}}'
            ),
            (),
            r,
            _record,
            expect=expect,
        ),
        Case(
            "managed-env record of garbage",
            ("rocmpanel-env.json", "broken-env"),
            _plant_record(b"{nope"),
            (),
            r,
            _record,
            expect=expect,
        ),
        Case(
            "interpreters.json of garbage",
            ("interpreters.json",),
            _plant_bytes(_interpreters, b"{garbage"),
            (),
            r,
            _interpreters,
        ),
    ]
    p = ENV_CMDS
    out += [
        Case(
            "~/.profile with repeated block markers",
            (".profile",),
            _plant_bytes(_profile, BROKEN_MARKERS),
            ("env list", "env set"),
            p,
            _profile,
        ),
        Case(
            "~/.profile with a begin marker and no end",
            (".profile",),
            _plant_bytes(_profile, BEGIN_ONLY),
            (),
            p,
            _profile,
        ),
        Case("~/.profile is a FIFO", (".profile",), _plant_fifo(_profile), ("env list",), p),
        Case(
            "environment.d file with bytes that are not UTF-8",
            ("60-rocmpanel.conf",),
            _plant_bytes(_envd, b"RPBENCH_A=1\n\xff\xfe\x00garbage\n"),
            (),
            p,
            _envd,
        ),
        Case("environment.d file is a FIFO", ("60-rocmpanel.conf",), _plant_fifo(_envd), (), p),
        Case(
            "data/backups is a file, not a folder",
            ("backups",),
            _plant_backups_file,
            ("env set",),
            ("env set", "env list", "smoke test"),
        ),
    ]
    return out


@dataclass
class CaseRun:
    case: str
    command: str
    ran: Ran | None
    causes: list[str] = field(default_factory=list)
    bytes_checked: bool = False
    bytes_kept: bool = True


@dataclass
class Damage:
    cases: list[str] = field(default_factory=list)
    runs: list[CaseRun] = field(default_factory=list)
    baseline: dict[str, Ran] = field(default_factory=dict)  # each command in a healthy home
    seed_problem: str = ""

    def clean_cases(self) -> int:
        return sum(1 for c in self.cases if all(not r.causes for r in self.runs if r.case == c))

    def kept(self) -> tuple[int, int]:
        checked = [r for r in self.runs if r.bytes_checked]
        return sum(1 for r in checked if r.bytes_kept), len(checked)


def _norm(text: str, home: Home) -> str:
    return re.sub(r"\s+", " ", text.replace(str(home.root), "<home>")).strip()


def _all_hashes(root: Path) -> set[str]:
    hashes = set()
    for path in root.rglob("*"):
        try:
            if path.is_symlink() or not path.is_file():
                continue
            hashes.add(hashlib.sha256(path.read_bytes()).hexdigest())
        except OSError:
            continue
    return hashes


def _run_one(parent: Path, case: Case, command: str, seeds: Seeds, base: Ran) -> CaseRun:
    """``command`` in a fresh home holding ``case``'s damage; ``base``: it in a healthy one
    (its stderr already has the home's path replaced by ``<home>``)."""
    home = Home.make(parent, "damage")
    write(home.profile, USER_PROFILE)
    result = CaseRun(case.name, command, None)
    try:
        case.plant(home, seeds)
    except Exception as exc:  # a case that cannot be planted is reported, not skipped
        result.causes.append(f"could not plant the damage: {exc}")
        home.remove()
        return result
    planted: bytes | None = None
    if case.kept is not None:
        target = case.kept(home)
        planted = target.read_bytes() if target.is_file() else None
    timeout = SMOKE_TIMEOUT if command == "smoke test" else TIMEOUT
    ran = run(home, COMMANDS[command], timeout=timeout)
    result.ran = ran
    if ran.hung:
        result.causes.append(f"hung (killed after {timeout:.0f} s)")
    elif ran.internal_error:
        result.causes.append(f"internal error (exit 70): {ran.last_line()}")
    if ran.traceback:
        result.causes.append(f"traceback: {ran.last_line()}")
    if not ran.hung and command == "smoke test" and ran.rc != 0:
        result.causes.append(f"smoke test exit {ran.rc}: {ran.last_line()}")
    elif not ran.hung and ran.rc not in (0, 70):
        same_as_healthy = ran.rc == base.rc and _norm(ran.err, home) == base.err
        if not same_as_healthy and not any(n in ran.text for n in case.names):
            result.causes.append(f"exit {ran.rc} without naming {case.names[0]}: {ran.last_line()}")
    want = case.expect.get(command)
    if want and not ran.hung and want not in ran.text:
        result.causes.append(f"output does not show {want!r}: {ran.last_line()}")
    if planted is not None and len(planted) > 0:
        result.bytes_checked = True
        digest = hashlib.sha256(planted).hexdigest()
        where = case.kept(home) if case.kept is not None else None
        if case.in_place:
            now = where.read_bytes() if where is not None and where.is_file() else None
            result.bytes_kept = now == planted
            if not result.bytes_kept:
                result.causes.append(f"{case.names[0]} was rewritten (the user's bytes changed)")
        else:
            result.bytes_kept = digest in _all_hashes(home.root)
            if not result.bytes_kept:
                result.causes.append(f"the user's {case.names[0]} bytes are gone")
    if command == "env set" and not ran.hung and ran.rc not in (0, None):
        half = _half_applied(home)
        if half:
            result.causes.append(half)
    home.remove()
    return result


def _half_applied(home: Home) -> str:
    """A failed ``env set`` must leave neither store changed (finding 6)."""
    try:
        envd = parse_envd(home.envd.read_bytes()) if home.envd.is_file() else {}
    except (OSError, ValueError):
        return ""
    if "RPBENCH_X" in envd:
        return "env set failed but environment.d was written (half-applied change)"
    return ""


def damaged_files(parent: Path, quick: bool, workers: int) -> Damage:
    damage = Damage()
    seeds = make_seeds(parent)
    damage.seed_problem = seeds.problem
    chosen = [c for c in cases() if c.quick] if quick else cases()
    plan = [(c, cmd) for c in chosen for cmd in (c.quick if quick else c.relevant)]
    needed = sorted({cmd for _, cmd in plan}, key=list(COMMANDS).index)
    for cmd in needed:
        healthy = Home.make(parent, "baseline")
        write(healthy.profile, USER_PROFILE)
        ran = run(healthy, COMMANDS[cmd], timeout=SMOKE_TIMEOUT)
        ran.err = _norm(ran.err, healthy)
        damage.baseline[cmd] = ran
        healthy.remove()
    damage.cases = [c.name for c in chosen]
    with ThreadPoolExecutor(workers) as pool:
        damage.runs = list(
            pool.map(
                lambda item: _run_one(parent, item[0], item[1], seeds, damage.baseline[item[1]]),
                plan,
            )
        )
    return damage


# ---- 4. bad input ------------------------------------------------------------------------

Setup = Callable[[Home], Sequence[str]]


@dataclass
class Input:
    label: str
    setup: Setup
    quick: bool = False
    shell_value: tuple[str, str] | None = None  # (name, value): an accepted value must work in sh


# A path that does not exist, inside the input's own temp home (a command that creates what
# it is given then creates it there, never outside the benchmark's folders).
MISSING = "{missing}"


def _args(*args: str) -> Setup:
    return lambda home: [a.replace(MISSING, str(home.root / "missing")) for a in args]


def _with_journal(data: bytes, *args: str) -> Setup:
    def setup(home: Home) -> Sequence[str]:
        write(home.journal, data)
        return args

    return setup


def _fifo_arg(*before: str, after: Sequence[str] = ()) -> Setup:
    def setup(home: Home) -> Sequence[str]:
        fifo = home.root / "pasted-output"
        make_fifo(fifo)
        return (*before, str(fifo), *after)

    return setup


def _dir_arg(*before: str, files: dict[str, bytes] | None = None) -> Setup:
    def setup(home: Home) -> Sequence[str]:
        folder = home.root / "a-folder"
        folder.mkdir()
        for name, data in (files or {}).items():
            write(folder / name, data)
        return (*before, str(folder))

    return setup


def _file_arg(data: bytes, *before: str, name: str = "file", after: Sequence[str] = ()) -> Setup:
    def setup(home: Home) -> Sequence[str]:
        path = home.root / name
        write(path, data)
        return (*before, str(path), *after)

    return setup


def _set(name: str, value: str, *extra: str, quick: bool = False) -> Input:
    return Input(
        f"env set {name!r} {value!r} {' '.join(extra)}".strip(),
        _args("env", "set", name, value, *extra),
        quick,
        (name, value) if not extra else None,
    )


def inputs() -> list[Input]:
    bad_record = b'{"version": 1, "entries": [{"records": [{"store": "profile", "backup": 5}]}]}'
    return [
        Input(
            "env undo, env_undo.json of garbage",
            _with_journal(b"{\x00 garbage", "env", "undo"),
            quick=True,
        ),
        Input(
            "env undo, entry without records",
            _with_journal(b'{"version": 1, "entries": [{}]}', "env", "undo"),
            quick=True,
        ),
        Input(
            "env undo, entries not objects",
            _with_journal(b'{"version": 1, "entries": [5]}', "env", "undo"),
        ),
        Input("env undo, record with a number as backup", _with_journal(bad_record, "env", "undo")),
        Input(
            "env undo, record of an unknown store",
            _with_journal(
                b'{"version": 1, "entries": [{"records": [{"store": "x"}]}]}', "env", "undo"
            ),
        ),
        Input(
            "env set, env_undo.json of garbage",
            _with_journal(b"{\x00 garbage", "env", "set", "RPBENCH_X", "1"),
        ),
        Input("torch plan --python abc", _args("torch", "plan", "--python", "abc"), quick=True),
        Input("torch plan --python 3.99.1.2", _args("torch", "plan", "--python", "3.99.1.2")),
        Input("torch plan --gfx 'gfx!!'", _args("torch", "plan", "--gfx", "gfx!!")),
        Input("torch plan --rocm abc", _args("torch", "plan", "--rocm", "abc")),
        Input(
            "telemetry --interval inf",
            _args("telemetry", "--count", "2", "--interval", "inf"),
            quick=True,
        ),
        Input("telemetry --interval nan", _args("telemetry", "--count", "2", "--interval", "nan")),
        Input("telemetry --interval -1", _args("telemetry", "--count", "2", "--interval", "-1")),
        Input(
            "telemetry --interval 1e308", _args("telemetry", "--count", "2", "--interval", "1e308")
        ),
        Input("telemetry --interval abc", _args("telemetry", "--interval", "abc")),
        Input("telemetry --count -5", _args("telemetry", "--count", "-5"), quick=True),
        Input(
            "telemetry --sysfs-root a missing folder",
            _args("telemetry", "--sysfs-root", MISSING),
        ),
        Input("telemetry --proc-root /dev/null", _args("telemetry", "--proc-root", "/dev/null")),
        Input("doctor --from /dev/zero", _args("doctor", "--from", "/dev/zero"), quick=True),
        Input("doctor --from FIFO", _fifo_arg("doctor", "--from"), quick=True),
        Input("doctor --from a missing file", _args("doctor", "--from", MISSING)),
        Input("doctor --from a folder", _dir_arg("doctor", "--from")),
        Input("doctor --from binary garbage", _file_arg(_garbage(65536), "doctor", "--from")),
        Input("doctor --rocminfo-file /dev/zero", _args("doctor", "--rocminfo-file", "/dev/zero")),
        Input("doctor --rocm-version abc", _args("doctor", "--rocm-version", "abc")),
        Input("doctor --sysfs-root /dev/null", _args("doctor", "--sysfs-root", "/dev/null")),
        Input("probe --python /bin/false", _args("probe", "--python", "/bin/false"), quick=True),
        Input("probe --python a missing file", _args("probe", "--python", MISSING)),
        Input("probe --python /dev/null", _args("probe", "--python", "/dev/null")),
        Input("chat --model ''", _args("chat", "--model", "", "--prompt", "hi"), quick=True),
        Input("chat --model a missing folder", _args("chat", "--model", MISSING)),
        Input("chat --model /dev/null", _args("chat", "--model", "/dev/null")),
        Input("chat --model an empty folder", _dir_arg("chat", "--prompt", "hi", "--model")),
        Input("chat --temperature nan", _dir_arg("chat", "--temperature", "nan", "--model")),
        Input("chat --context -5", _dir_arg("chat", "--context", "-5", "--model")),
        Input("env set 'BAD NAME' x", _args("env", "set", "BAD NAME", "x"), quick=True),
        Input("env set '' x", _args("env", "set", "", "x")),
        Input("env get 'BAD NAME'", _args("env", "get", "BAD NAME")),
        Input("env unset 'BAD NAME'", _args("env", "unset", "BAD NAME")),
        _set("RPBENCH_X", "${FOO", quick=True),
        _set("RPBENCH_X", "${NOPE?boom}"),
        _set("RPBENCH_X", "${HOME/o/0}"),
        _set("RPBENCH_X", "${HOME:1}"),
        _set("RPBENCH_X", "a$b"),
        _set("RPBENCH_X", "pid$$"),
        _set("RPBENCH_X", "it's"),
        _set("RPBENCH_X", 'say "hi" \\ back'),
        _set("RPBENCH_X", "a\nb"),
        _set("RPBENCH_X", "$(id)"),
        _set("PATH", "${NOPE?boom}", "--append"),
        _set("PATH", "/opt/x:${FOO", "--prepend"),
        Input(
            "env set RPBENCH_X 1 --home a missing folder",
            _args("env", "set", "RPBENCH_X", "1", "--home", MISSING + "/home"),
        ),
        Input(
            "env set RPBENCH_X 1 --home /dev/null",
            _args("env", "set", "RPBENCH_X", "1", "--home", "/dev/null"),
        ),
        Input(
            "torch history --export 999999",
            _args("torch", "history", "--export", "999999"),
            quick=True,
        ),
        Input("torch history --export abc", _args("torch", "history", "--export", "abc")),
        Input("torch history --compare 1 2", _args("torch", "history", "--compare", "1", "2")),
        Input(
            "torch envs --activate nonexistent", _args("torch", "envs", "--activate", "nonexistent")
        ),
        Input(
            "torch envs --remove nonexistent --yes",
            _args("torch", "envs", "--remove", "nonexistent", "--yes"),
        ),
        Input("torch envs --register /dev/null", _args("torch", "envs", "--register", "/dev/null")),
        Input(
            "torch validate --python /bin/false --json",
            _args("torch", "validate", "--python", "/bin/false", "--json"),
        ),
        Input("torch validate --env nonexistent", _args("torch", "validate", "--env", "nope")),
        Input(
            "data update --from /dev/null",
            _args("data", "update", "--from", "/dev/null"),
            quick=True,
        ),
        Input("data update --from a missing folder", _args("data", "update", "--from", MISSING)),
        Input("data update --from FIFO", _fifo_arg("data", "update", "--from")),
        Input(
            "data update --from a garbage .zip",
            _file_arg(_garbage(4096), "data", "update", "--from", name="set.zip"),
        ),
        Input(
            "data update --from a folder with garbage dataset.yaml",
            _dir_arg("data", "update", "--from", files={"dataset.yaml": _garbage(512)}),
        ),
        Input("data rollback with nothing to roll back", _args("data", "rollback")),
    ]


@dataclass
class InputRun:
    label: str
    ran: Ran
    shell_problem: str = ""

    def cause(self) -> str:
        if self.ran.hung:
            return f"{self.label}: hung (killed after {TIMEOUT:.0f} s)"
        if self.ran.traceback or self.ran.internal_error:
            return f"{self.label}: exit {self.ran.rc}, {self.ran.last_line()}"
        return f"{self.label}: {self.shell_problem}" if self.shell_problem else ""


def _shell_check(home: Home, name: str, value: str) -> str:
    """An accepted value must leave a ~/.profile that sh reads back, value unchanged."""
    sh = shutil.which("sh")
    if sh is None or not home.profile.is_file():
        return ""
    env = {"HOME": str(home.user), "PATH": "/usr/bin:/bin"}
    script = f'. "$HOME/.profile" && printf "%s" "${{{name}-<unset>}}"'
    try:
        done = subprocess.run(
            [sh, "-c", script], env=env, capture_output=True, timeout=10, check=False
        )
    except subprocess.TimeoutExpired:
        return "accepted, and sourcing ~/.profile hangs"
    err = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0 or err:
        return f"accepted, and sh then fails on ~/.profile: {err[:120] or done.returncode}"
    got = done.stdout.decode("utf-8", "replace")
    if name != "PATH" and got != value:
        return f"accepted, and sh reads it back as {got!r}"
    if name != "PATH" and home.envd.is_file():
        try:
            envd = parse_envd(home.envd.read_bytes())
        except ValueError as exc:
            return f"accepted, and environment.d is unreadable: {exc}"
        read = envd_value(envd[name], env) if name in envd else None
        if read != value:
            return f"accepted, and environment.d gives {read!r} (written {envd.get(name)!r})"
    return ""


def _run_input(parent: Path, item: Input) -> InputRun:
    home = Home.make(parent, "input")
    write(home.profile, USER_PROFILE)
    args = item.setup(home)
    ran = run(home, args, timeout=TIMEOUT)
    result = InputRun(item.label, ran)
    if item.shell_value is not None and ran.rc == 0:
        result.shell_problem = _shell_check(home, *item.shell_value)
    home.remove()
    return result


def bad_inputs(parent: Path, quick: bool, workers: int) -> list[InputRun]:
    chosen = [i for i in inputs() if i.quick or not quick]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda item: _run_input(parent, item), chosen))
