"""The window's language: which translation to load, where its .qm file is, installing it.

The translations' sources are ``resources/translations/<lang>/*.ts`` (committed);
``scripts/translations.py build`` compiles them into ``rocmpanel_<lang>.qm`` beside them,
which the build and test scripts do. An install made without that step (``pip install .``
from a checkout) still has the .ts files: the first start in that language compiles them
with PySide6's lrelease into the cache folder, once. Without any of it the window is
English, and the log says why.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rocmpanel.base import paths, subproc
from rocmpanel.base.enums import Language
from rocmpanel.base.resources import resource_path

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication, QTranslator

log = logging.getLogger(__name__)

#: The translations that exist (besides English, the source language).
AVAILABLE = (Language.CHINESE_SIMPLIFIED.value,)
# A .qm older than its sources by more than this is stale (installs do not keep mtimes exactly).
_STALE_S = 2.0
_LRELEASE_TIMEOUT_S = 60.0


def language_for(tags: Iterable[str]) -> str | None:
    """The translation for the first of the user's languages (BCP 47 tags in order of
    preference, as ``QLocale.uiLanguages()`` gives them) that has one or is English; None
    means English. Chinese in the Simplified script (zh-Hans, zh-CN, zh-SG, zh) maps to
    zh_CN; Traditional (zh-Hant, zh-TW, zh-HK, zh-MO) has no translation yet. Qt ends a
    Traditional locale's list with a bare "zh" (zh_TW: zh-Hant-TW, zh-TW, zh-Hant, zh): that
    fallback is the Traditional one's, not a wish for Simplified."""
    traditional = False
    for tag in tags:
        parts = tag.replace("_", "-").split("-")
        lang = parts[0].lower()
        rest = {p.lower() for p in parts[1:]}
        if lang == "en":
            return None
        if lang == "zh":
            if rest & {"hant", "tw", "hk", "mo"}:
                traditional = True
                continue
            if traditional and not rest:
                continue
            return Language.CHINESE_SIMPLIFIED.value
    return None


def chosen_language(setting: Language, system_tags: Sequence[str]) -> str | None:
    """The translation to load for the Language setting; None means English."""
    if setting is Language.SYSTEM:
        return language_for(system_tags)
    if setting is Language.ENGLISH:
        return None
    return setting.value if setting.value in AVAILABLE else None


def _sources(lang: str) -> list[Path]:
    folder = resource_path("translations") / lang
    try:
        return sorted(folder.glob("*.ts"))
    except OSError:
        return []


def _fresh(qm: Path, sources: Sequence[Path]) -> bool:
    try:
        built = qm.stat().st_mtime
        return all(s.stat().st_mtime <= built + _STALE_S for s in sources)
    except OSError:
        return False


def qt_tool(name: str) -> str | None:
    """Qt's ``name`` tool (lrelease, lupdate): pyside6-<name> beside this interpreter, the
    binary inside the PySide6 package, or pyside6-<name> on PATH; None when none is."""
    import shutil

    beside = Path(sys.executable).parent / f"pyside6-{name}"
    if beside.exists():
        return str(beside)
    try:
        import PySide6
    except ImportError:
        return None
    inside = Path(PySide6.__file__).parent / (name + (".exe" if sys.platform == "win32" else ""))
    if inside.exists():
        return str(inside)
    return shutil.which(f"pyside6-{name}")


def _lrelease() -> str | None:
    return qt_tool("lrelease")


def qm_file(lang: str) -> Path | None:
    """The compiled translation for ``lang``: the shipped one when it is up to date with
    the sources, else one compiled into the cache folder (compiling it now if needed)."""
    shipped = resource_path("translations") / f"rocmpanel_{lang}.qm"
    sources = _sources(lang)
    if shipped.is_file() and (not sources or _fresh(shipped, sources)):
        return shipped
    if not sources:
        log.warning("no translation files for %s in %s", lang, shipped.parent)
        return None
    cached = paths.cache_dir() / "translations" / f"rocmpanel_{lang}.qm"
    if cached.is_file() and _fresh(cached, sources):
        return cached
    tool = _lrelease()
    if tool is None:
        log.warning("cannot compile the %s translation: PySide6's lrelease not found", lang)
        return None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(cached.name + ".part")
        done = subproc.run(
            [tool, "-silent", *map(str, sources), "-qm", str(partial)],
            capture_output=True,
            text=True,
            timeout=_LRELEASE_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0 or not partial.is_file():
            log.warning("lrelease failed for %s: %s", lang, (done.stderr or done.stdout)[-500:])
            return None
        partial.replace(cached)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("cannot compile the %s translation: %s", lang, exc)
        return None
    return cached


def install_translators(app: QCoreApplication, setting: Language) -> str | None:
    """Load the translation the setting asks for (and Qt's own for its dialogs' buttons);
    returns the language loaded, None for English."""
    from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator

    lang = chosen_language(setting, QLocale.system().uiLanguages())
    if lang is None:
        return None
    qm = qm_file(lang)
    if qm is None:
        return None
    ours = QTranslator(app)
    if not ours.load(str(qm)):
        log.warning("could not load the translation %s", qm)
        return None
    app.installTranslator(ours)
    keep: list[QTranslator] = [ours]
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    qtbase = QTranslator(app)
    if qtbase.load(f"qtbase_{lang}", qt_dir):
        app.installTranslator(qtbase)
        keep.append(qtbase)
    app.setProperty("rocmpanel_language", lang)
    log.info("language: %s (%s)", lang, qm)
    return lang
