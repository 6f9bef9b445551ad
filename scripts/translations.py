"""Extract, fill, check and build the panel's translations (Qt .ts sources, .qm files).

    python scripts/translations.py update [AREA ...]   # pyside6-lupdate: .py -> .ts
    python scripts/translations.py fill AREA FILE.json  # translations from a JSON file
    python scripts/translations.py status [--list]      # what is left untranslated
    python scripts/translations.py build [--out DIR]    # pyside6-lrelease: .ts -> .qm

The sources are one .ts file per area (a feature folder, or the shared layers) and
language, ``resources/translations/<lang>/<area>.ts``, committed; ``build`` compiles all
areas of a language into ``resources/translations/rocmpanel_<lang>.qm`` (not committed).
The JSON of ``fill`` maps a context to {English source: translation}, or, flat, an English
source to its translation in every context.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "resources" / "translations"
LANGUAGES = ("zh_CN",)
# Each area's folders under rocmpanel/ (workers never show text in the window).
AREAS: dict[str, tuple[str, ...]] = {
    "shell": ("shell", "gui"),
    "common": ("base", "jobs", "machine", "knowledge"),
    "setup": ("setup", "envvars"),
    "monitor": ("monitor",),
    "pytorch": ("pytorch",),
    "tuning": ("tuning",),
    "chat": ("chat",),
    "multigpu": ("multigpu",),
}


def qt_tool(name: str) -> str:
    """Qt's ``name`` tool, as the window finds lrelease (rocmpanel.shell.translations)."""
    if str(ROOT) not in sys.path:  # a checkout run with a Python that lacks the package
        sys.path.insert(0, str(ROOT))
    from rocmpanel.shell.translations import qt_tool as find

    found = find(name)
    if found is None:
        raise SystemExit(f"pyside6-{name} not found: install PySide6-Essentials")
    return found


def area_sources(area: str) -> list[Path]:
    files: list[Path] = []
    for folder in AREAS[area]:
        files += sorted((ROOT / "rocmpanel" / folder).rglob("*.py"))
    return files


def ts_path(lang: str, area: str) -> Path:
    return TRANSLATIONS / lang / f"{area}.ts"


def update(areas: list[str], out: Path | None = None) -> None:
    """Extract the marked strings of ``areas`` into their .ts files (into ``out`` instead
    of resources/translations when given: the test that the sources are current)."""
    for lang in LANGUAGES:
        for area in areas:
            target = ts_path(lang, area) if out is None else out / lang / f"{area}.ts"
            target.parent.mkdir(parents=True, exist_ok=True)
            rel = [str(p.relative_to(ROOT)) for p in area_sources(area)]
            cmd = [qt_tool("lupdate"), "-locations", "none", "-no-obsolete", *rel]
            cmd += ["-target-language", lang, "-ts", str(target)]
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            print(f"{target}: {summary(target)}")


def messages(ts: Path) -> list[tuple[str, ET.Element]]:
    tree = ET.parse(ts)
    out = []
    for context in tree.getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            out.append((name, message))
    return out


def unfinished(ts: Path) -> list[tuple[str, str]]:
    left = []
    for context, message in messages(ts):
        tr = message.find("translation")
        if tr is None or tr.get("type") == "unfinished" or not (tr.text or "").strip():
            if tr is not None and tr.get("type") == "vanished":
                continue
            left.append((context, message.findtext("source") or ""))
    return left


def summary(ts: Path) -> str:
    total = len(messages(ts))
    return f"{total} strings, {len(unfinished(ts))} untranslated"


def fill(area: str, source: Path) -> None:
    table = json.loads(source.read_text(encoding="utf-8"))
    for lang in LANGUAGES:
        ts = ts_path(lang, area)
        tree = ET.parse(ts)
        done = 0
        for context in tree.getroot().iter("context"):
            name = context.findtext("name") or ""
            own = table.get(name) if isinstance(table.get(name), dict) else None
            for message in context.iter("message"):
                text = message.findtext("source") or ""
                value = own.get(text) if own else None
                if value is None and isinstance(table.get(text), str):
                    value = table[text]
                if value is None:
                    continue
                tr = message.find("translation")
                if tr is None:
                    tr = ET.SubElement(message, "translation")
                tr.text = value
                tr.attrib.pop("type", None)
                done += 1
        write_ts(tree, ts)
        print(f"{ts.relative_to(ROOT)}: {done} filled; {summary(ts)}")


def write_ts(tree: ET.ElementTree, ts: Path) -> None:
    ET.indent(tree, space="    ")
    body = ET.tostring(tree.getroot(), encoding="unicode")
    ts.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", "utf-8")


def status(listing: bool) -> int:
    left_total = 0
    for lang in LANGUAGES:
        for area in AREAS:
            ts = ts_path(lang, area)
            if not ts.exists():
                print(f"{lang}/{area}: no .ts yet")
                continue
            left = unfinished(ts)
            left_total += len(left)
            print(f"{lang}/{area}: {summary(ts)}")
            if listing:
                for context, text in left:
                    print(f"    [{context}] {text!r}")
    return 1 if left_total else 0


def build(out: Path) -> list[Path]:
    built = []
    out.mkdir(parents=True, exist_ok=True)
    for lang in LANGUAGES:
        sources = [str(ts_path(lang, a)) for a in AREAS if ts_path(lang, a).exists()]
        if not sources:
            continue
        qm = out / f"rocmpanel_{lang}.qm"
        subprocess.run(
            [qt_tool("lrelease"), "-silent", *sources, "-qm", str(qm)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        built.append(qm)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("update")
    up.add_argument("areas", nargs="*", metavar="AREA", help=", ".join(AREAS))
    fl = sub.add_parser("fill")
    fl.add_argument("area", choices=list(AREAS))
    fl.add_argument("json", type=Path)
    st = sub.add_parser("status")
    st.add_argument("--list", action="store_true")
    bd = sub.add_parser("build")
    bd.add_argument("--out", type=Path, default=TRANSLATIONS)
    args = parser.parse_args(argv)
    if args.command == "update":
        unknown = [a for a in args.areas if a not in AREAS]
        if unknown:
            parser.error(f"unknown area {unknown[0]!r}: one of {', '.join(AREAS)}")
        update(args.areas or list(AREAS))
    elif args.command == "fill":
        fill(args.area, args.json)
    elif args.command == "status":
        return status(args.list)
    else:
        for qm in build(args.out):
            print(qm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
