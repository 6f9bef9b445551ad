"""What every part of the generator shares: the pinned sources and the YAML writer."""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Source:
    """One upstream file the generator reads: where it comes from and how old it is."""

    key: str  # the name generated files cite it by
    what: str  # one line: what it is
    file: str  # its path inside the sources folder
    url: str  # where a fresh copy is fetched from
    repo: str = ""  # owner/name when it comes from a git repository
    path: str = ""  # its path in that repository
    commit: str = ""  # the commit the local copy was taken at
    date: str = ""  # the date of that commit or of the data (YYYY-MM-DD)

    def record(self) -> dict[str, str]:
        """The entry a generated file's ``generated.sources`` lists (no local path)."""
        return {k: v for k, v in asdict(self).items() if v and k != "file"}


def load_pins(name: str) -> dict[str, Source]:
    """The sources pinned in ``scripts/datagen/<name>``, by key."""
    raw = yaml.safe_load((HERE / name).read_text(encoding="utf-8")) or {}
    return {
        str(key): Source(key=str(key), **{k: str(v) for k, v in entry.items()})
        for key, entry in raw.items()
    }


def read_source(sources_dir: Path, source: Source) -> str:
    """The text of a pinned source's local copy; FileNotFoundError names the fetch step."""
    path = sources_dir / source.file
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: run scripts/fetch_data_sources.py "
            f"(source {source.key}: {source.url})"
        )
    return path.read_text(encoding="utf-8", errors="replace")


def generated_block(sources: list[Source], today: _dt.date | None = None) -> dict[str, Any]:
    """The ``generated:`` mapping every generated file starts with."""
    return {
        "by": "scripts/generate_data.py",
        "at": (today or _dt.date.today()).isoformat(),
        "sources": [s.record() for s in sources],
    }


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_presenter)


def write_yaml(path: Path, doc: dict[str, Any], header: str) -> None:
    """Writes ``doc`` under a comment ``header`` (each line gets "# "), keys in given order."""
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()]
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text("\n".join(lines) + "\n" + body, encoding="utf-8")
