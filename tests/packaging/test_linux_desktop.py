"""Linux desktop integration: the .desktop file, the AppStream metainfo, and
packaging/linux/install.sh + uninstall.sh run on a stand-in bundle in a temporary HOME."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import rocmpanel

ROOT = Path(__file__).resolve().parents[2]
RESOURCES = ROOT / "resources"
DESKTOP = RESOURCES / "rocmpanel.desktop"
APPSTREAM_ID = "io.github.rocmpanel.rocmpanel"
METAINFO = RESOURCES / f"{APPSTREAM_ID}.metainfo.xml"
LINUX = ROOT / "packaging" / "linux"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
# The Desktop Menu spec's main categories: an entry with two shows up twice in menus.
MAIN_CATEGORIES = {
    "AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics",
    "Network", "Office", "Science", "Settings", "System", "Utility",
}  # fmt: skip


def desktop_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  (keys are case-sensitive)
    parser.read_string(path.read_text(encoding="utf-8"))
    return dict(parser["Desktop Entry"])


def test_desktop_entry_keys() -> None:
    entry = desktop_entry(DESKTOP)
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "rocmpanel-gui"  # the pip gui-script; install.sh rewrites it
    assert entry["Icon"] == "rocmpanel"  # a theme name: the hicolor files' name
    assert entry["Terminal"] == "false"
    assert entry["StartupWMClass"] == "rocmpanel"
    categories = [c for c in entry["Categories"].split(";") if c]
    assert len(set(categories) & MAIN_CATEGORIES) == 1
    assert entry["Comment"] and entry["Name"] == "rocmpanel"


def test_the_icon_name_has_a_file_in_every_size() -> None:
    icon = desktop_entry(DESKTOP)["Icon"]
    for size in SIZES:
        assert (
            RESOURCES / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{icon}.png"
        ).is_file()
    assert (RESOURCES / f"{icon}.svg").is_file()  # installed as scalable/apps/


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils absent")
def test_desktop_file_validates() -> None:
    done = subprocess.run(
        ["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in done.stdout.lower() and "hint" not in done.stdout.lower()


def test_metainfo_names_the_desktop_file_and_this_version() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APPSTREAM_ID
    assert root.findtext("launchable[@type='desktop-id']") == DESKTOP.name
    assert root.findtext("project_license")
    assert rocmpanel.__version__ in [r.get("version") for r in root.iter("release")]


@pytest.mark.skipif(not shutil.which("appstreamcli"), reason="appstreamcli absent")
def test_metainfo_validates() -> None:
    done = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(METAINFO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# -- install.sh / uninstall.sh -----------------------------------------------------------


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """A stand-in for dist/rocmpanel: an executable and the resources where PyInstaller
    puts them (packaging/rocmpanel.spec)."""
    root = tmp_path / "dist" / "rocmpanel"
    shutil.copytree(
        RESOURCES, root / "_internal" / "rocmpanel" / "resources",
        ignore=shutil.ignore_patterns("__pycache__", "*.py", "translations", "*.yaml"),
    )  # fmt: skip
    exe = root / "rocmpanel"
    exe.write_text('#!/bin/sh\necho "rocmpanel 0.0-test"\n', encoding="utf-8")
    exe.chmod(0o755)
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy(LINUX / script, root / script)  # as packaging/build.py does
    return root


def run_script(script: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return subprocess.run(
        ["bash", str(script), *args], env=env, capture_output=True, text=True, check=False
    )


def installed_files(home: Path) -> set[str]:
    return {
        p.relative_to(home).as_posix()
        for p in home.rglob("*")
        if (p.is_file() or p.is_symlink()) and "_internal" not in p.parts
    }


pytestmark_linux = pytest.mark.skipif(sys.platform == "win32", reason="a Linux install")


@pytestmark_linux
def test_install_then_uninstall_in_a_temporary_home(bundle: Path, tmp_path: Path) -> None:
    home = tmp_path / "home dir"  # a space, as in real homes now and then
    home.mkdir()
    done = run_script(bundle / "install.sh", home)
    assert done.returncode == 0, done.stderr
    expected = {
        ".local/bin/rocmpanel",
        ".local/opt/rocmpanel/rocmpanel",
        ".local/opt/rocmpanel/install.sh",
        ".local/opt/rocmpanel/uninstall.sh",
        ".local/share/applications/rocmpanel.desktop",
        f".local/share/metainfo/{APPSTREAM_ID}.metainfo.xml",
        ".local/share/icons/hicolor/scalable/apps/rocmpanel.svg",
    } | {f".local/share/icons/hicolor/{n}x{n}/apps/rocmpanel.png" for n in SIZES}
    assert installed_files(home) == expected
    opt = home / ".local" / "opt" / "rocmpanel"
    assert (opt / "_internal" / "rocmpanel" / "resources" / "rocmpanel.svg").is_file()
    assert os.readlink(home / ".local" / "bin" / "rocmpanel") == str(opt / "rocmpanel")
    entry = desktop_entry(home / ".local" / "share" / "applications" / "rocmpanel.desktop")
    assert entry["Exec"] == f'"{opt / "rocmpanel"}"'
    assert entry["TryExec"] == str(opt / "rocmpanel")
    link = subprocess.run([str(home / ".local/bin/rocmpanel")], capture_output=True, text=True)
    assert link.stdout.strip() == "rocmpanel 0.0-test"

    again = run_script(opt / "install.sh", home)  # from the installed copy: nothing changes
    assert again.returncode == 0, again.stderr
    assert installed_files(home) == expected

    done = run_script(opt / "uninstall.sh", home)
    assert done.returncode == 0, done.stderr
    assert installed_files(home) == set()
    assert not opt.exists()


@pytestmark_linux
def test_uninstall_keeps_a_bin_entry_it_did_not_make(bundle: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    mine = home / ".local" / "bin" / "rocmpanel"
    mine.parent.mkdir(parents=True)
    mine.write_text("#!/bin/sh\n", encoding="utf-8")  # e.g. pip's entry point
    done = run_script(LINUX / "uninstall.sh", home)
    assert done.returncode == 0, done.stderr
    assert mine.is_file()
    assert "not the link install.sh made" in done.stderr


@pytestmark_linux
def test_install_without_a_build_says_how_to_make_one(tmp_path: Path) -> None:
    done = run_script(LINUX / "install.sh", tmp_path, "--bundle", str(tmp_path / "nothing"))
    assert done.returncode == 1
    assert "packaging/build.py" in done.stderr
    assert installed_files(tmp_path) == set()


@pytestmark_linux
def test_install_honours_prefix_and_xdg_data_home(bundle: Path, tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    argv = ["bash", str(LINUX / "install.sh"), "--bundle", str(bundle)]
    done = subprocess.run(
        [*argv, "--prefix", str(tmp_path / "pfx")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pfx" / "opt" / "rocmpanel" / "rocmpanel").is_file()
    assert (tmp_path / "data" / "applications" / "rocmpanel.desktop").is_file()
    assert not (tmp_path / "home").exists()
    argv = ["bash", str(LINUX / "uninstall.sh"), "--prefix", str(tmp_path / "pfx")]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    left = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert left == [] and not (tmp_path / "pfx" / "opt" / "rocmpanel").exists()


@pytestmark_linux
def test_a_relative_prefix_installs_absolute_links_and_entries(
    bundle: Path, tmp_path: Path
) -> None:
    """--prefix rel (from the current folder): the link and the menu entry still work from
    anywhere, and uninstall.sh given the same relative prefix removes it all."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run(
        ["bash", str(LINUX / "install.sh"), "--bundle", str(bundle), "--prefix", "pfx"],
        env=env, cwd=work, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    opt = work / "pfx" / "opt" / "rocmpanel"
    link = work / "pfx" / "bin" / "rocmpanel"
    assert os.readlink(link) == str(opt / "rocmpanel")
    ran = subprocess.run([str(link)], capture_output=True, text=True, check=False)
    assert ran.stdout.strip() == "rocmpanel 0.0-test"
    entry = desktop_entry(work / "pfx" / "share" / "applications" / "rocmpanel.desktop")
    assert entry["Exec"] == f'"{opt / "rocmpanel"}"'
    done = subprocess.run(
        ["bash", str(LINUX / "uninstall.sh"), "--prefix", "pfx"],
        env=env, cwd=work, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not opt.exists() and not link.is_symlink()


@pytestmark_linux
def test_exec_escapes_a_prefix_with_percent_dollar_quote_and_backslash(
    bundle: Path, tmp_path: Path
) -> None:
    """The Desktop Entry spec: inside Exec's quotes ", `, $ and \\ get a backslash, the
    string value escapes backslashes again, and a literal % is %%."""
    prefix = tmp_path / 'odd %u $HOME "q" `x` & \\b'
    done = run_script(bundle / "install.sh", tmp_path / "home", "--prefix", str(prefix))
    assert done.returncode == 0, done.stderr
    entry = (prefix / "share" / "applications" / "rocmpanel.desktop").read_text("utf-8")
    exe = str(prefix / "opt" / "rocmpanel" / "rocmpanel")
    quoted = "".join("\\" + c if c in '"`$\\' else c for c in exe)
    expected = '"' + quoted.replace("\\", "\\\\").replace("%", "%%") + '"'
    assert f"Exec={expected}\n" in entry
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(
            ["desktop-file-validate", str(prefix / "share" / "applications" / "rocmpanel.desktop")],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout


def test_install_keeps_a_bin_entry_it_did_not_make(bundle: Path, tmp_path: Path) -> None:
    """pip's entry point of a `pip install --user` was replaced by the link, then removed
    with it by uninstall.sh: the user's file was gone without a word."""
    home = tmp_path / "home"
    mine = home / ".local" / "bin" / "rocmpanel"
    mine.parent.mkdir(parents=True)
    mine.write_text("#!/bin/sh\n# pip\n", encoding="utf-8")
    done = run_script(bundle / "install.sh", home)
    assert done.returncode == 0, done.stderr
    assert not mine.is_symlink() and mine.read_text(encoding="utf-8") == "#!/bin/sh\n# pip\n"
    assert "not the link install.sh makes" in done.stderr
    assert (home / ".local" / "share" / "applications" / "rocmpanel.desktop").is_file()
    done = run_script(home / ".local" / "opt" / "rocmpanel" / "uninstall.sh", home)
    assert done.returncode == 0 and mine.is_file()


@pytestmark_linux
@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils absent")
def test_the_installed_entry_validates_in_a_home_with_odd_characters(
    bundle: Path, tmp_path: Path
) -> None:
    home = tmp_path / 'it\'s "q" $x 100%'  # a % is a field code in Exec unless doubled
    home.mkdir()
    done = run_script(bundle / "install.sh", home)
    assert done.returncode == 0, done.stderr
    entry = home / ".local" / "share" / "applications" / "rocmpanel.desktop"
    checked = subprocess.run(
        ["desktop-file-validate", str(entry)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
