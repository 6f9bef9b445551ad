"""Every visible string in the main window goes through Qt's translation machinery.

A pseudo-translator wraps each translated string in ⟦ ⟧; the window is opened in demo
mode (so every tab has GPUs to show), every tab and page is built, and the texts of its
widgets (labels, buttons, group titles, tab titles, headers, placeholders, tooltips,
menus) are read. A word of English outside the brackets is a string that was never passed
to ``translate``: the test lists each one with the widget that shows it. Text that is
data (a GPU's name, a path, a number, a name from the data files) is not translated.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from PySide6.QtCore import QCoreApplication, Qt, QTranslator
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTabBar,
    QTableView,
    QTabWidget,
    QTextEdit,
    QTreeView,
    QWidget,
)

from rocmpanel.base.resources import resource_path
from rocmpanel.shell.main_window import MainWindow
from rocmpanel.shell.tabs import TABS

OPEN, CLOSE = "\u27e6", "\u27e7"


class PseudoTranslator(QTranslator):
    """Answers every lookup with the source text in brackets."""

    def translate(  # type: ignore[override]
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        del context, disambiguation, n
        return OPEN + source + CLOSE


# Names that are the same in every language (products, systems, projects).
PROPER = {
    "Radeon", "Instinct", "Linux", "Windows", "Slurm", "Prometheus", "Navi", "Vega",
    "Python", "Fedora", "Ubuntu", "Debian", "Arch", "Pro", "Max", "Ryzen", "Hugging",
    "Face", "Llama", "Mistral", "Qwen", "Gemma", "Phi", "Inno", "Setup", "Ctrl", "Shift",
    "Alt", "Esc", "rocmpanel",
}  # fmt: skip
WORD = re.compile(r"\b[A-Za-z][a-z]{2,}\b")
NOT_WORDS = [
    re.compile(p)
    for p in (
        r"<[^>]+>",  # HTML tags
        r"&\w+;",  # entities
        r"\b\w+://\S+",  # addresses
        r"\S*[/\\]\S*",  # paths, fractions
        r"\S*[_=.]\S*\w",  # identifiers, NAME=value, file names, versions
        r"\S*\d\S*",  # anything with a number in it
        r"--?[\w-]+",  # command-line options
        r"`[^`]*`",  # code
    )
]


def _unmarked(text: str) -> str:
    """``text`` without its translated parts (innermost brackets first)."""
    inner = re.compile(re.escape(OPEN) + "[^" + OPEN + CLOSE + "]*" + re.escape(CLOSE))
    while True:
        stripped = inner.sub(" ", text)
        if stripped == text:
            return stripped
        text = stripped


def english_words(text: str) -> list[str]:
    rest = _unmarked(text).replace("&&", "&").replace("&", "")
    for pattern in NOT_WORDS:
        rest = pattern.sub(" ", rest)
    return [w for w in WORD.findall(rest) if w not in PROPER]


def _scalars(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node.strip()
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _scalars(key)
            yield from _scalars(value)
    elif isinstance(node, list):
        for item in node:
            yield from _scalars(item)


def data_strings() -> set[str]:
    """Whole strings that come from the data files (preset names, GPU names, catalogue
    entries): data, shown as written."""
    found: set[str] = set()
    for path in Path(resource_path("")).glob("*.yaml"):
        found.update(_plain(s) for s in _scalars(yaml.safe_load(path.read_text("utf-8"))))
    return found


def _plain(text: str) -> str:
    """Text as a reader sees it: no tags or entities, whitespace collapsed."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return " ".join(text.split())


# Where a widget joins several pieces: lines, HTML lines and list items.
LINES = re.compile(r"\n|<br\s*/?>|</?li>|</?ul>|</?p>")


def _not_data(text: str, data: set[str]) -> str:
    """``text`` less the lines, or the comma-separated items of a line (a package list),
    that are a data file's text."""
    kept = []
    for line in map(_plain, LINES.split(text)):
        if line in data:
            continue
        kept += [item for item in line.split(", ") if item not in data]
    return "\n".join(kept)


def widget_texts(widgets: list[QWidget]) -> Iterator[tuple[str, str]]:
    """(where, text) for every text these widgets show."""
    for widget in widgets:
        where = f"{type(widget).__name__} {widget.objectName()}".strip()
        if isinstance(widget, (QLabel, QAbstractButton)):
            yield where, widget.text()
        elif isinstance(widget, QGroupBox):
            yield where, widget.title()
        elif isinstance(widget, (QLineEdit, QTextEdit, QPlainTextEdit)):
            yield where + " placeholder", widget.placeholderText()
        elif isinstance(widget, QComboBox):
            for i in range(widget.count()):
                yield where + " item", widget.itemText(i)
        elif isinstance(widget, QTabBar):
            for i in range(widget.count()):
                yield where + " tab", widget.tabText(i)
                yield where + " tab tooltip", widget.tabToolTip(i)
        elif isinstance(widget, (QTableView, QTreeView)):
            header = (
                widget.horizontalHeader() if isinstance(widget, QTableView) else widget.header()
            )
            for section in range(header.count()):
                value = header.model().headerData(
                    section, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole
                )
                if isinstance(value, str):
                    yield where + " header", value
        if isinstance(widget, QMenu):
            yield where + " title", widget.title()
            for action in widget.actions():
                yield where + " action", action.text()
        yield where + " tooltip", widget.toolTip()
        yield where + " status tip", widget.statusTip()


def untranslated(window: MainWindow, widgets: list[QWidget]) -> list[str]:
    """The texts of ``widgets`` with English words outside the translated parts."""
    current = window.ctx.inventory.current
    data = data_strings() | ({g.name for g in current.gpus} if current is not None else set())
    problems = set()
    for where, text in widget_texts(widgets):
        # Text from a data file (a GPU's note, a package list) is shown as written.
        if english_words(_not_data(_unmarked(text), data)):
            problems.add(f"{where}: {text!r}")
    return sorted(problems)


@pytest.fixture
def pseudo_translator(qapp):  # type: ignore[no-untyped-def]
    translator = PseudoTranslator()
    QCoreApplication.installTranslator(translator)
    yield translator
    QCoreApplication.removeTranslator(translator)


@pytest.fixture
def pseudo_window(pseudo_translator, demo_window: MainWindow) -> MainWindow:  # type: ignore[no-untyped-def]
    """The demo window built under the pseudo-translator (installed first)."""
    return demo_window


def _settle(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.build_all_tabs()
    qtbot.waitUntil(lambda: window.ctx.inventory.current is not None, timeout=10_000)
    # Pages made on first opening (the environment editor, ...): open every page once.
    for title in window.tab_titles():
        tab = window.tab(title)
        for pages in tab.findChildren(QTabWidget) if tab is not None else []:
            for index in range(pages.count()):
                pages.setCurrentIndex(index)
                qtbot.wait(20)
            pages.setCurrentIndex(0)
    qtbot.wait(300)  # the tabs' first background reads arrive and fill their widgets


@pytest.mark.parametrize("title", [t.title for t in TABS])
def test_every_visible_string_of_a_tab_is_marked(
    pseudo_window: MainWindow, qtbot, title: str
) -> None:  # type: ignore[no-untyped-def]
    _settle(qtbot, pseudo_window)
    tab = pseudo_window.tab(title)
    assert tab is not None
    problems = untranslated(pseudo_window, [tab, *tab.findChildren(QWidget)])
    assert not problems, f"{len(problems)} unmarked in {title}:\n" + "\n".join(problems)


def test_every_visible_string_around_the_tabs_is_marked(pseudo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Menus, status bar, jobs strip, banners, log dock: the window less its tabs."""
    _settle(qtbot, pseudo_window)
    inside: set[QWidget] = set()
    for title in pseudo_window.tab_titles():
        tab = pseudo_window.tab(title)
        if tab is not None:
            inside.update([tab, *tab.findChildren(QWidget)])
    rest = [w for w in pseudo_window.findChildren(QWidget) if w not in inside]
    problems = untranslated(pseudo_window, [pseudo_window, *rest])
    assert not problems, f"{len(problems)} unmarked:\n" + "\n".join(problems)


def test_the_check_finds_an_unmarked_string(pseudo_window: MainWindow) -> None:
    """The walk sees what a tab adds, and tells a marked string from an unmarked one."""
    tab = pseudo_window.tab(pseudo_window.tab_titles()[0]) or pseudo_window
    marked = QLabel(QCoreApplication.translate("Test", "Run the check"), tab)
    plain = QLabel("Run the check again", tab)
    found = untranslated(pseudo_window, [marked, plain])
    assert found == ["QLabel: 'Run the check again'"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (OPEN + "Load {name}" + CLOSE, []),
        (OPEN + "GPU " + CLOSE + "Radeon RX 7900 XT", []),
        ("/home/user/models/llama", []),
        ("HSA_OVERRIDE_GFX_VERSION=11.0.0", []),
        ("12.5 GiB", []),
        ("<b>" + OPEN + "Ready" + CLOSE + "</b>", []),
        (OPEN + "Spread over " + OPEN + "GPU 0" + CLOSE + " and more" + CLOSE, []),
        ("Install PyTorch", ["Install"]),
        ("<i>not marked</i>", ["not", "marked"]),
        (OPEN + "Load" + CLOSE + " failed", ["failed"]),
        ("&Quit", ["Quit"]),
    ],
)
def test_english_words(text: str, words: list[str]) -> None:
    assert english_words(text) == words


class RecordingTranslator(QTranslator):
    """Answers every lookup with the source itself and records what was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[tuple[str, str]] = set()

    def translate(  # type: ignore[override]
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        del disambiguation, n
        self.asked.add((context, source))
        return source


def _ts_keys() -> set[tuple[str, str]]:
    import xml.etree.ElementTree as ET

    keys = set()
    for ts in (Path(resource_path("translations")) / "zh_CN").glob("*.ts"):
        for context in ET.parse(ts).getroot().iter("context"):
            name = context.findtext("name") or ""
            keys.update((name, m.findtext("source") or "") for m in context.iter("message"))
    return keys


@pytest.fixture
def recorder(qapp):  # type: ignore[no-untyped-def]
    translator = RecordingTranslator()
    QCoreApplication.installTranslator(translator)
    yield translator
    QCoreApplication.removeTranslator(translator)


def test_every_string_the_window_asks_for_is_in_the_sources(
    recorder: RecordingTranslator, demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """The pseudo-translator answers any lookup, so a ``translate(ctx, text)`` whose text
    was never extracted (a variable not marked with QT_TRANSLATE_NOOP, another context)
    would pass it: here every lookup the window makes must be a message of the .ts files."""
    _settle(qtbot, demo_window)
    demo_window.open_shortcuts().close()
    known = _ts_keys()
    missing = sorted(
        f"[{context}] {source!r}"
        for context, source in recorder.asked
        if not context.startswith("Q")  # Qt's own strings (its dialogs' buttons)
        and (context, source) not in known
        and english_words(source)  # a product name or a number reads the same in Chinese
    )
    assert len(recorder.asked) > 300
    assert not missing, "asked for but not in the .ts files:\n" + "\n".join(missing)
