"""The window's language: the choice from the setting and the system's languages, the .qm
file (shipped, or compiled into the cache from the .ts sources), the translators installed;
and the .ts sources themselves (complete, placeholders kept)."""

from __future__ import annotations

import os
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication

from rocmpanel.base.enums import Language
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.base.resources import resource_path
from rocmpanel.shell import translations
from rocmpanel.shell.translations import chosen_language, language_for

TS_DIR = resource_path("translations") / "zh_CN"


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["zh-Hans-CN", "en-US"], "zh_CN"),
        (["zh-CN"], "zh_CN"),
        (["zh_SG"], "zh_CN"),
        (["zh"], "zh_CN"),
        (["zh-Hant-TW", "zh-CN"], "zh_CN"),  # the first language with a translation
        (["zh-TW"], None),
        (["zh-HK", "en"], None),
        (["zh-Hant-TW", "zh-TW", "zh-Hant", "zh"], None),  # Qt's list for LANG=zh_TW
        (["zh-Hant-HK", "zh-HK", "zh-Hant", "zh", "zh-Hans-CN"], "zh_CN"),
        (["en-GB", "zh-CN"], None),  # English comes first
        (["de-DE", "fr-FR"], None),
        (["de-DE", "zh-CN"], "zh_CN"),
        ([], None),
    ],
)
def test_the_system_language_picks_a_translation(tags: list[str], expected: str | None) -> None:
    assert language_for(tags) == expected


@pytest.mark.parametrize("name", ["zh_TW", "zh_HK", "zh_MO"])
def test_a_traditional_chinese_system_stays_english(name: str) -> None:
    """QLocale's own list for these ends in a bare "zh", which once meant zh_CN."""
    from PySide6.QtCore import QLocale

    assert language_for(QLocale(name).uiLanguages()) is None


def test_the_setting_overrides_the_system() -> None:
    assert chosen_language(Language.SYSTEM, ["zh-CN"]) == "zh_CN"
    assert chosen_language(Language.ENGLISH, ["zh-CN"]) is None
    assert chosen_language(Language.CHINESE_SIMPLIFIED, ["en-US"]) == "zh_CN"


def test_translate_is_english_without_qt(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "PySide6.QtCore")
    assert translate("Ctx", "Load {name}").format(name="x") == "Load x"
    assert QT_TRANSLATE_NOOP("Ctx", "kept") == "kept"


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A resources folder with one small .ts source, and a private cache."""
    root = tmp_path / "resources"
    (root / "translations" / "zh_CN").mkdir(parents=True)
    (root / "translations" / "zh_CN" / "t.ts").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n'
        '<TS version="2.1" language="zh_CN"><context><name>Probe</name>'
        "<message><source>Check again</source><translation>再次检查</translation></message>"
        "</context></TS>\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(translations, "resource_path", lambda name: root / name)
    monkeypatch.setenv("ROCMPANEL_HOME", str(tmp_path / "home"))
    return root


def _lookup(qm: Path) -> str:
    from PySide6.QtCore import QTranslator

    tr = QTranslator()
    assert tr.load(str(qm))
    return tr.translate("Probe", "Check again")


def test_without_a_shipped_qm_the_sources_are_compiled_once_into_the_cache(
    sources: Path, qapp
) -> None:  # type: ignore[no-untyped-def]
    first = translations.qm_file("zh_CN")
    assert first is not None and first.is_relative_to(Path(os.environ["ROCMPANEL_HOME"]))
    assert _lookup(first) == "再次检查"
    stamp = first.stat().st_mtime_ns
    assert translations.qm_file("zh_CN") == first
    assert first.stat().st_mtime_ns == stamp  # not compiled again


def test_a_stale_shipped_qm_is_not_used(sources: Path, qapp) -> None:  # type: ignore[no-untyped-def]
    shipped = sources / "translations" / "rocmpanel_zh_CN.qm"
    shipped.write_bytes(b"old")
    old = time.time() - 3600
    os.utime(shipped, (old, old))
    qm = translations.qm_file("zh_CN")
    assert qm is not None and qm != shipped
    assert _lookup(qm) == "再次检查"
    os.utime(shipped, None)  # built after its sources: the shipped one is used
    assert translations.qm_file("zh_CN") == shipped


def test_without_lrelease_the_window_stays_english(
    sources: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(translations, "_lrelease", lambda: None)
    assert translations.qm_file("zh_CN") is None
    assert "lrelease not found" in caplog.text


def test_a_broken_source_leaves_english_and_says_why(
    sources: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (sources / "translations" / "zh_CN" / "t.ts").write_text("<TS><context>", encoding="utf-8")
    assert translations.qm_file("zh_CN") is None
    assert "lrelease failed" in caplog.text


def test_install_translators_translates_the_window(sources: Path, qapp) -> None:  # type: ignore[no-untyped-def]
    assert translations.install_translators(qapp, Language.CHINESE_SIMPLIFIED) == "zh_CN"
    try:
        assert translate("Probe", "Check again") == "再次检查"
        # Qt's own strings (standard buttons) come from Qt's translation
        from PySide6.QtWidgets import QDialogButtonBox

        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        assert box.buttons()[0].text() == "取消"
    finally:
        _remove_translators(qapp)
    assert translate("Probe", "Check again") == "Check again"
    assert translations.install_translators(qapp, Language.ENGLISH) is None


def _remove_translators(app: QCoreApplication) -> None:
    from PySide6.QtCore import QTranslator

    for translator in app.findChildren(QTranslator):
        app.removeTranslator(translator)
        translator.deleteLater()


# -- the committed sources ------------------------------------------------------------
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|%n|%\d|<[^>]+>|&[a-z]+;")


def _messages() -> list[tuple[str, str, str, str | None]]:
    found = []
    for ts in sorted(TS_DIR.glob("*.ts")):
        for context in ET.parse(ts).getroot().iter("context"):
            name = context.findtext("name") or ""
            for message in context.iter("message"):
                tr = message.find("translation")
                kind = None if tr is None else tr.get("type")
                text = None if tr is None or kind in ("unfinished", "vanished") else tr.text
                found.append((ts.name, name, message.findtext("source") or "", text))
    return found


def test_every_marked_string_has_a_chinese_translation() -> None:
    messages = _messages()
    assert len(messages) > 500  # the whole window, not a sample
    missing = [f"{ts} [{ctx}] {src!r}" for ts, ctx, src, text in messages if not text]
    assert not missing, f"{len(missing)} untranslated:\n" + "\n".join(missing[:50])


def test_translations_keep_placeholders_tags_and_mnemonics() -> None:
    wrong = []
    for ts, ctx, source, text in _messages():
        if not text:
            continue
        if sorted(PLACEHOLDER.findall(source)) != sorted(PLACEHOLDER.findall(text)):
            wrong.append(f"{ts} [{ctx}] {source!r} -> {text!r}")
        mnemonic = re.search(r"&([A-Za-z0-9])", source.replace("&&", ""))
        if mnemonic and f"&{mnemonic.group(1)}".lower() not in text.lower():  # Qt ignores case
            wrong.append(f"{ts} [{ctx}] mnemonic {mnemonic.group(0)!r} lost: {text!r}")
    assert not wrong, "\n".join(wrong[:50])


def test_the_sources_are_current(tmp_path: Path) -> None:
    """Every string marked in the code is in the committed .ts files (run
    ``python scripts/translations.py update`` after marking new ones)."""
    script = _script()
    script.update(list(script.AREAS), out=tmp_path)
    missing, stale = [], []
    for fresh in sorted((tmp_path / "zh_CN").glob("*.ts")):
        extracted = set(_keys(fresh))
        committed = set(_keys(TS_DIR / fresh.name))
        missing += [f"{fresh.name} [{c}] {s!r}" for c, s in sorted(extracted - committed)]
        stale += [f"{fresh.name} [{c}] {s!r}" for c, s in sorted(committed - extracted)]
    assert not missing, "not in the .ts files:\n" + "\n".join(missing[:50])
    # and nothing in them that the code no longer asks for (or that a folder left out of
    # the extraction would lose)
    assert not stale, "in the .ts files, not in the code:\n" + "\n".join(stale[:50])
    assert {p.name for p in (tmp_path / "zh_CN").glob("*.ts")} == {
        p.name for p in TS_DIR.glob("*.ts")
    }


def test_the_build_compiles_every_area(tmp_path: Path, qapp) -> None:  # type: ignore[no-untyped-def]
    """One message of each area's .ts is translated by the .qm the build makes."""
    from PySide6.QtCore import QTranslator

    script = _script()
    (qm,) = script.build(tmp_path)
    translator = QTranslator()
    assert translator.load(str(qm))
    for ts in sorted(TS_DIR.glob("*.ts")):
        context, source, text = next(m for m in _translated(ts))
        assert translator.translate(context, source) == text, ts.name


def _keys(ts: Path) -> list[tuple[str, str]]:
    if not ts.exists():
        return []
    return [
        (context.findtext("name") or "", message.findtext("source") or "")
        for context in ET.parse(ts).getroot().iter("context")
        for message in context.iter("message")
    ]


# "Saving the preset": what was being done, shown as "{doing} failed: {error}" and
# "{doing}…" (gui/report.py, gui/status_line.py). Its translation is a plain verb phrase
# (保存预设): 正在保存预设 would read 正在保存预设失败 in the error. The steps of a model load
# are progress lines of their own, never a ``doing``.
DOING = re.compile(r"[A-Z][a-z]+ing (?:the|a|an) ")
NOT_DOING = {"load_steps"}


def test_what_was_being_done_reads_in_an_error_message() -> None:
    wrong = [
        f"{ts} [{ctx}] {source!r} -> {text!r}"
        for ts, ctx, source, text in _messages()
        if text
        and ctx not in NOT_DOING
        and DOING.match(source)
        and not source.endswith(("…", ".", ":"))
        and text.startswith("正在")
    ]
    assert not wrong, "drop 正在 (it reads 正在…失败 in an error):\n" + "\n".join(wrong)


def _translated(ts: Path) -> list[tuple[str, str, str]]:
    found = []
    for context in ET.parse(ts).getroot().iter("context"):
        for message in context.iter("message"):
            tr = message.find("translation")
            if (
                tr is not None
                and tr.text
                and tr.get("type") is None
                and message.get("numerus") is None
            ):
                found.append(
                    (context.findtext("name") or "", message.findtext("source") or "", tr.text)
                )
    return found


def _script():  # type: ignore[no-untyped-def]
    """scripts/translations.py as a module (it is a script, not part of the package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "translations.py"
    spec = importlib.util.spec_from_file_location("translations_script", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script
