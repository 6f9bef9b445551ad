"""The health report stays English in a translated window (it is for maintainers and forums):
gathering reads checklist messages, verdicts and notes through modules that translate."""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtCore import QCoreApplication, QTranslator

from rocmpanel.base.i18n import english, translate
from rocmpanel.shell.report import gather_report
from rocmpanel.shell.report_render import to_markdown

MARK = "\u27e6"


class _Marking(QTranslator):
    def translate(  # type: ignore[override]
        self, context: str, source: str, disambiguation: str | None = None, n: int = -1
    ) -> str:
        del context, disambiguation, n
        return MARK + source


@pytest.fixture
def marking(qapp):  # type: ignore[no-untyped-def]
    translator = _Marking()
    QCoreApplication.installTranslator(translator)
    yield
    QCoreApplication.removeTranslator(translator)


def test_a_report_gathered_in_a_translated_window_is_english(
    marking: None, tmp_path: Path, kfd: ModuleType
) -> None:
    tree = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX)
    assert translate("checklist", "AMD GPU").startswith(MARK)  # the window's translation
    report = gather_report(environ={"ROCMPANEL_SYSFS_ROOT": str(tree)}, read_stores=False)
    text = to_markdown(report)
    assert report.checks and MARK not in text
    assert translate("checklist", "AMD GPU").startswith(MARK)  # and the window's stays


def test_english_holds_for_its_own_thread_only(marking: None) -> None:
    seen: list[str] = []
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        inside.wait(5)
        seen.append(translate("Test", "Other thread"))
        leave.set()

    thread = threading.Thread(target=other)
    thread.start()
    with english():
        inside.set()
        leave.wait(5)
        seen.append(translate("Test", "This thread"))
    thread.join(5)
    assert seen == [MARK + "Other thread", "This thread"]
