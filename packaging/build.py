"""Build the one-folder PyInstaller bundle of rocmpanel (Linux and Windows alike).

    python packaging/build.py [--smoke] [--reuse-venv]

1. makes the build environment ``build/venv-pyinstaller`` (never the development venv: the
   bundle must hold only what a regular, non-editable install of rocmpanel needs) and
   installs PyInstaller and the project into it;
2. compiles the translations (``scripts/translations.py build``: the .qm is not committed);
3. checks the committed icons (``scripts/make_icons.py --check``);
4. runs ``packaging/rocmpanel.spec``: output in ``dist/rocmpanel/``, work files in
   ``build/pyinstaller/``; on Linux it copies ``packaging/linux/install.sh`` and
   ``uninstall.sh`` into the bundle;
5. with ``--smoke``, runs ``packaging/smoke.py`` on the result.

Run it with the Python the bundle should embed (3.10 or later, built with a shared
libpython on Linux, as pyenv's ``--enable-shared`` and distribution Pythons are). On
Windows: ``py -3.11 packaging\\build.py`` from the checkout, then build the installer with
``iscc packaging\\windows\\rocmpanel.iss``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "build" / "venv-pyinstaller"
WORK = ROOT / "build" / "pyinstaller"
DIST = ROOT / "dist"
BUNDLE = DIST / "rocmpanel"
SPEC = ROOT / "packaging" / "rocmpanel.spec"
#: PyInstaller 6.10 added nothing we rely on beyond 6.0's ``contents_directory``; the upper
#: bound keeps a spec-format change from landing unannounced.
PYINSTALLER = "pyinstaller>=6.10,<7"


def venv_python() -> Path:
    if sys.platform == "win32":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def run(argv: list[str], **kwargs: object) -> None:
    print("+", " ".join(argv), flush=True)
    subprocess.run(argv, cwd=ROOT, check=True, **kwargs)  # type: ignore[call-overload]


def pip(*args: str) -> None:
    run([str(venv_python()), "-m", "pip", "--disable-pip-version-check", *args])


def prepare_venv(reuse: bool) -> None:
    if not venv_python().exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
        reuse = False
    if not reuse:
        pip("install", "--quiet", "--upgrade", PYINSTALLER)
        pip("install", "--quiet", str(ROOT))  # the dependencies, as a user's install has them
    # Always the checkout's current code, non-editable (an editable install would point the
    # frozen import scan at a finder hook instead of the package). setuptools builds in
    # build/lib: a stale copy there could carry deleted modules into the bundle.
    shutil.rmtree(ROOT / "build" / "lib", ignore_errors=True)
    pip("install", "--quiet", "--no-deps", "--force-reinstall", str(ROOT))


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="run packaging/smoke.py after")
    parser.add_argument(
        "--reuse-venv",
        action="store_true",
        help="do not upgrade PyInstaller and the dependencies in an existing build venv",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    prepare_venv(args.reuse_venv)
    python = str(venv_python())
    run([python, "scripts/translations.py", "build"])
    run([python, "scripts/make_icons.py", "--check"])
    frozen_at = time.monotonic()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")  # the Qt hooks import Qt
    run(
        [
            python, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
            "--distpath", str(DIST), "--workpath", str(WORK), str(SPEC),
        ],
        env=env,
    )  # fmt: skip
    if sys.platform != "win32":  # a copied bundle installs and removes itself
        for script in ("install.sh", "uninstall.sh"):
            shutil.copy2(ROOT / "packaging" / "linux" / script, BUNDLE / script)
    done = time.monotonic()
    size = folder_size(BUNDLE)
    print(
        f"built {BUNDLE.relative_to(ROOT)}: {size / 2**20:.1f} MiB, "
        f"{done - started:.0f} s in all ({done - frozen_at:.0f} s PyInstaller)",
        flush=True,
    )
    if args.smoke:
        run([sys.executable, str(ROOT / "packaging" / "smoke.py"), str(BUNDLE)])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:  # the step's own output says what went wrong
        print(f"build failed: exit {exc.returncode} from {' '.join(exc.cmd)}", file=sys.stderr)
        sys.exit(1)
