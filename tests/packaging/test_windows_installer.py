"""packaging/windows/rocmpanel.iss, checked without Inno Setup: its sections parse, its
names match the spec's executables and the shell's AppUserModelID, and every file it
takes exists in a bundle laid out as the spec builds it on Windows."""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from pathlib import Path, PureWindowsPath

import pytest

import rocmpanel

ROOT = Path(__file__).resolve().parents[2]
ISS = ROOT / "packaging" / "windows" / "rocmpanel.iss"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_spec import spec_names  # noqa: E402

SECTIONS = {"Setup", "Languages", "Tasks", "Files", "Icons", "Run", "UninstallDelete"}


def parse_iss(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(#define values, lines of each [Section]); ValueError on a line outside a section."""
    defines: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("#"):
            match = re.fullmatch(r'#define\s+(\w+)\s+"([^"]*)"', line)
            if match:
                defines.setdefault(match[1], match[2])
            elif not re.fullmatch(r"#(ifndef \w+|endif)", line):
                raise ValueError(f"line {number}: unknown directive {line!r}")
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            current = header[1]
            if current in sections:
                raise ValueError(f"line {number}: [{current}] twice")
            sections[current] = []
        elif current is None:
            raise ValueError(f"line {number}: outside any section")
        else:
            sections[current].append(line)
    return defines, sections


def expand(value: str, defines: dict[str, str]) -> str:
    """ISPP's {#Name} substitutions (recursively, as defines may use others)."""
    while "{#" in value:
        value = re.sub(r"\{#(\w+)\}", lambda m: defines[m[1]], value)
    return value


def params(line: str) -> dict[str, str]:
    """An entry line of [Files], [Icons], ...: ``Name: "v"; Flags: a b`` -> dict."""
    out = {}
    for part in re.findall(r'(\w+):\s*("[^"]*"|[^;]*)', line):
        out[part[0]] = part[1].strip().strip('"')
    return out


@pytest.fixture(scope="module")
def iss() -> tuple[dict[str, str], dict[str, list[str]]]:
    return parse_iss(ISS.read_text(encoding="utf-8"))


def setup_values(sections: dict[str, list[str]]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in sections["Setup"])


def test_sections_parse(iss) -> None:
    _defines, sections = iss
    assert set(sections) == SECTIONS
    for name in SECTIONS - {"Setup"}:
        assert all(params(line) for line in sections[name])


def test_parser_catches_broken_scripts() -> None:
    with pytest.raises(ValueError, match="outside any section"):
        parse_iss("AppName=x\n[Setup]\n")
    with pytest.raises(ValueError, match="twice"):
        parse_iss("[Setup]\n[Setup]\n")


def test_version_and_executables_match_the_spec(iss) -> None:
    defines, _sections = iss
    names = spec_names()
    assert defines["AppVersion"] == rocmpanel.__version__
    assert defines["AppExe"] == names["gui"] + ".exe"
    assert defines["CliExe"] == names["cli"] + ".exe"
    bundle = PureWindowsPath(defines["BundleDir"])
    assert bundle.parts[-2:] == ("dist", names["app"])


def test_app_user_model_id_is_the_shells() -> None:
    tree = ast.parse((ROOT / "rocmpanel" / "shell" / "app.py").read_text(encoding="utf-8"))
    value = next(
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", None) == "APP_USER_MODEL_ID"
        and isinstance(node.value, ast.Constant)
    )
    defines, _sections = parse_iss(ISS.read_text(encoding="utf-8"))
    assert defines["AppUserModelID"] == value


def test_start_menu_shortcut_uninstaller_and_icon(iss) -> None:
    defines, sections = iss
    icons = [params(expand(line, defines)) for line in sections["Icons"]]
    menu = [i for i in icons if i["Name"].startswith("{group}\\") and "Tasks" not in i]
    assert {i["Filename"] for i in menu} == {"{app}\\rocmpanel-gui.exe", "{uninstallexe}"}
    setup = setup_values(sections)
    assert setup["AppId"].startswith("{{")  # a literal brace: Inno's escape
    icon = ISS.parent / PureWindowsPath(setup["SetupIconFile"]).as_posix()
    assert icon.resolve() == (ROOT / "resources" / "icons" / "rocmpanel.ico")
    assert icon.is_file()
    output = ISS.parent / PureWindowsPath(setup["OutputDir"]).as_posix()
    assert output.resolve() == ROOT / "dist"


def windows_bundle(root: Path) -> set[str]:
    """The files the spec's Windows build makes, as paths relative to dist/rocmpanel."""
    names = spec_names()
    return {
        f"{names['cli']}.exe",
        f"{names['gui']}.exe",
        "_internal/python311.dll",
        "_internal/rocmpanel/workers/probe.py",
        "_internal/rocmpanel/resources/icons/rocmpanel.ico",
    }


def test_every_file_source_exists_in_the_bundle_layout(iss) -> None:
    defines, sections = iss
    layout = windows_bundle(ROOT)
    bundle_prefix = PureWindowsPath(defines["BundleDir"]).as_posix() + "/"
    covered: set[str] = set()
    for line in sections["Files"]:
        entry = params(expand(line, defines))
        source = PureWindowsPath(entry["Source"]).as_posix()
        assert source.startswith(bundle_prefix), source
        folder, _, name = source[len(bundle_prefix) :].rpartition("/")
        recursive = "recursesubdirs" in entry.get("Flags", "").split()
        matched = {
            f
            for f in layout
            if fnmatch.fnmatch(f.rpartition("/")[2], name)
            and (
                f.rpartition("/")[0] == folder
                or (recursive and f.startswith(f"{folder}/" if folder else ""))
            )
        }
        assert matched, f"{entry['Source']} matches nothing in the bundle"
        covered |= matched
    assert covered == layout  # nothing of the bundle is left out of the installer


def test_run_and_desktop_entries_start_the_windowed_exe(iss) -> None:
    defines, sections = iss
    started = {params(expand(line, defines))["Filename"] for line in sections["Run"]}
    assert started == {"{app}\\rocmpanel-gui.exe"}
    desktop = [p for p in map(params, sections["Icons"]) if p.get("Tasks") == "desktopicon"]
    assert len(desktop) == 1
