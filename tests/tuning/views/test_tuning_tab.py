"""The Tuning tab, offscreen, on a real preset store in a tmp folder: the list (built-ins,
user presets, unreadable files), effects on a gfx1100 machine, use for jobs, the built-in
refusals, delete / duplicate / import / export, the items search and "Add to preset…".

Every store call runs in the background, so the tests wait for the panel to go idle."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.base.settings import Settings
from rocmpanel.gui.background import pending_count, wait_for_background
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.preset_text import source_text
from rocmpanel.jobs.presets import Item, Preset, PresetStore, parse_preset
from rocmpanel.jobs.runner import JobManager
from rocmpanel.machine.gpu_model import GpuInfo, SystemInfo
from rocmpanel.machine.inventory import Inventory
from rocmpanel.tuning.views import presets_panel
from rocmpanel.tuning.views.items_panel import verdict_text
from rocmpanel.tuning.views.preset_details import GREY, UNCHECKED
from rocmpanel.tuning.views.presets_panel import BUILTIN_REFUSED
from rocmpanel.tuning.views.tab import TuningTab

RX7900 = Inventory(
    SystemInfo(
        "linux",
        rocm_version="7.2.4",
        gpus=(
            GpuInfo("Radeon 780M", gfx="gfx1103", vram_bytes=2**29, integrated=True),
            GpuInfo("Radeon RX 7900 XTX", gfx="gfx1100", vram_bytes=24 * 2**30, integrated=False),
        ),
    )
)
#: What the list shows on the RX 7900 (gfx1100, RDNA3): presets for any GPU or for RDNA3
#: are marked as suiting it.
SUITS = "  ✓"
BUILTIN_NAMES = [
    "Safe defaults",
    "RDNA3 consumer",
    "RDNA2 consumer",
    "RDNA4",
    "CDNA3 (MI300)",
    "Low VRAM / large model",
    "Throughput",
    "Debugging",
]
BUILTIN_LISTED = [
    f"{name}  (built in){'' if name in ('RDNA2 consumer', 'RDNA4', 'CDNA3 (MI300)') else SUITS}"
    for name in BUILTIN_NAMES
]
TF32_HIGH = Preset(
    "tf32-high",
    "TF32 high",
    "Made up for the test.",
    torch=(Item("torch", "float32_matmul_precision", "high", "Allows TF32.", "pt_matmul"),),
    env=(Item("env", "MIOPEN_FIND_MODE", "FAST", "Quick find.", "miopen_find"),),
)


@pytest.fixture
def ctx(qtbot):
    manager = JobManager(grace_s=2.0)
    messages: list[str] = []
    context = AppContext(Settings.load(), manager, messages.append)
    context.inventory.set_current(RX7900)
    context.messages = messages  # type: ignore[attr-defined]
    yield context
    manager.shutdown()
    assert wait_for_background(10_000)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "presets"


class Asker:
    """Stands in for the yes/no question: keeps each question, answers ``answer``."""

    def __init__(self) -> None:
        self.questions: list[str] = []
        self.answer = True

    def __call__(self, _parent: object, _title: str, text: str) -> bool:
        self.questions.append(text)
        return self.answer


@pytest.fixture
def asked(monkeypatch) -> Asker:
    asker = Asker()
    monkeypatch.setattr(presets_panel, "ask", asker)
    return asker


def idle(qtbot, tab: TuningTab) -> None:
    qtbot.waitUntil(lambda: not tab.presets.busy(), timeout=10_000)


def make_tab(qtbot, ctx, folder: Path, *user: Preset) -> TuningTab:
    store = PresetStore(folder)
    for preset in user:
        store.save(preset)
    tab = TuningTab(ctx, store=store)
    qtbot.addWidget(tab)
    tab.show()
    idle(qtbot, tab)
    return tab


def names(tab: TuningTab) -> list[str]:
    return [tab.presets.list.item(row).text() for row in range(tab.presets.list.count())]


def test_the_list_shows_builtins_then_user_presets_and_unreadable_files(qtbot, ctx, folder):
    folder.mkdir()
    bad = folder / "broken.yaml"
    bad.write_text("id: broken\nname: Broken\narchs: [rdna9]\n")
    tab = make_tab(qtbot, ctx, folder, TF32_HIGH)
    assert names(tab) == [*BUILTIN_LISTED, f"TF32 high{SUITS}"]
    assert BUILTIN_LISTED[:3] == [
        f"Safe defaults  (built in){SUITS}",
        f"RDNA3 consumer  (built in){SUITS}",
        "RDNA2 consumer  (built in)",
    ]
    assert tab.presets.list.item(1).toolTip().endswith("\nSuits your GPU (gfx1100).")
    assert tab.presets.legend_label.text() == "✓ suits your GPU (gfx1100)"
    assert tab.presets.legend_label.isVisibleTo(tab)
    assert tab.presets.problems_label.isVisibleTo(tab)
    assert tab.presets.problems_label.text() == (
        "These preset files could not be read and are left as they are:\n"
        f"{bad}: {bad}, line 3: archs[0]: unknown 'rdna9'; use any, rdna2, rdna3, rdna4, "
        "cdna2, cdna3, cdna4"
    )
    assert bad.read_text() == "id: broken\nname: Broken\narchs: [rdna9]\n"  # left alone
    assert tab.presets.details.title_label.text() == "Safe defaults — built in"
    assert tab.presets.list.focusPolicy() == Qt.FocusPolicy.StrongFocus
    assert tab.presets.use_button.text() == "&Use for jobs"
    assert [tab.pages.tabText(i) for i in range(tab.pages.count())] == [
        "&Presets",
        "&Items: what each setting really does",
        "A/B benchmar&k",
    ]


def test_effects_on_a_gfx1100_grey_tf32_and_keep_the_rest(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder, TF32_HIGH)
    tab.presets.select("tf32-high")
    tree = tab.presets.details.items_tree
    rows = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    assert tree.wordWrap() and tree.textElideMode() == Qt.TextElideMode.ElideNone
    assert [(r.text(0), r.text(1), r.text(2)) for r in rows] == [
        ("MIOPEN_FIND_MODE", "FAST", "applies"),
        (
            "torch: float32_matmul_precision",
            "high",
            "no effect here: gfx1100 has no TF32 hardware: float32 matmuls stay full float32",
        ),
    ]
    assert rows[0].foreground(0).color() != GREY
    assert all(rows[1].foreground(c).color() == GREY for c in range(4))
    assert rows[1].text(3) == "Allows TF32.\nSource: pt_matmul"  # not a catalogue key: as is
    assert [rows[1].toolTip(c) for c in range(4)] == [rows[1].text(c) for c in range(4)]
    tree.setCurrentItem(rows[1])
    assert tab.presets.details.detail_text == (
        "torch: float32_matmul_precision = high: Allows TF32.\nSource: pt_matmul\n"
        "On this machine: no effect here: gfx1100 has no TF32 hardware: float32 matmuls "
        "stay full float32"
    )
    assert tab.presets.details.item_detail.text() == tab.presets.details.detail_text.replace(
        "\n", "<br>"
    )


def test_use_for_jobs_saves_the_setting_and_updates_the_holder(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder)
    changes: list[str] = []
    ctx.active_preset.changed.connect(lambda: changes.append(ctx.active_preset.label()))
    tab.presets.select("rdna3-consumer")
    assert not tab.presets.stop_button.isEnabled()
    tab.presets.use_button.click()
    assert ctx.settings.general.active_preset == "rdna3-consumer"
    assert (ctx.active_preset.ident, ctx.active_preset.name) == ("rdna3-consumer", "RDNA3 consumer")
    assert wait_for_background(10_000)  # the settings file is written off the GUI thread
    qtbot.waitUntil(lambda: pending_count() == 0, timeout=10_000)
    assert Settings.load().general.active_preset == "rdna3-consumer"  # on disk
    assert changes == ["Preset: RDNA3 consumer"]
    assert tab.presets.active_label.text() == "Jobs run under the preset “RDNA3 consumer”."
    assert not tab.presets.use_button.isEnabled() and tab.presets.stop_button.isEnabled()
    assert tab.presets.status.text() == "Jobs started from now on run under “RDNA3 consumer”."
    tab.presets.stop_button.click()
    assert changes == ["Preset: RDNA3 consumer", "Preset: none"]
    qtbot.waitUntil(lambda: pending_count() == 0, timeout=10_000)
    assert Settings.load().general.active_preset == ""
    assert tab.presets.active_label.text() == (
        "Jobs run without a preset (their environment as it is)."
    )


def test_a_failed_save_of_the_active_preset_is_reported_and_the_holder_goes_back(
    qtbot, ctx, folder, monkeypatch
):
    tab = make_tab(qtbot, ctx, folder)
    changes: list[str] = []
    ctx.active_preset.changed.connect(lambda: changes.append(ctx.active_preset.label()))

    def refuse(*_args: object, **_kwargs: object) -> list[str]:
        raise PanelError("Settings not saved: the disk is full.")

    monkeypatch.setattr(Settings, "save", refuse)
    tab.presets.select("rdna3-consumer")
    tab.presets.use_button.click()
    assert changes == ["Preset: RDNA3 consumer"]  # at once, before the file is written
    qtbot.waitUntil(lambda: pending_count() == 0, timeout=10_000)
    assert changes == ["Preset: RDNA3 consumer", "Preset: none"]
    assert ctx.settings.general.active_preset == ""
    assert tab.presets.status.text() == "Settings not saved: the disk is full."
    assert tab.presets.use_button.isEnabled() and not tab.presets.stop_button.isEnabled()


def test_a_builtin_cannot_be_edited_or_deleted_and_says_so(qtbot, ctx, folder, asked):
    tab = make_tab(qtbot, ctx, folder, TF32_HIGH)
    panel = tab.presets
    panel.select("throughput")
    for button in (panel.edit_button, panel.delete_button):
        assert not button.isEnabled()
        assert button.toolTip() == "built in: Duplicate it to change a copy"
    assert panel.duplicate_button.isEnabled() and panel.export_button.isEnabled()
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_Delete)
    assert panel.status.text() == (
        "“Throughput” is built in and cannot be deleted: Duplicate it to change a copy."
    )
    qtbot.keyClick(panel.list, Qt.Key.Key_Return)  # Enter edits: refused the same way
    assert panel.status.text() == BUILTIN_REFUSED["edit"].format(name="Throughput")
    assert panel.status.text() == (
        "“Throughput” is built in and cannot be edited: Duplicate it to change a copy."
    )
    assert asked.questions == [] and panel.editor is None
    assert list(folder.glob("*.yaml")) == [folder / "tf32-high.yaml"]
    panel.select("tf32-high")  # a user preset: both come back
    assert panel.edit_button.isEnabled() and panel.delete_button.isEnabled()
    assert panel.edit_button.toolTip() == "" and panel.delete_button.toolTip() == ""


def test_use_for_jobs_on_a_preset_for_other_gpus_asks_first(qtbot, ctx, folder, asked):
    tab = make_tab(qtbot, ctx, folder)
    tab.presets.select("cdna3")
    asked.answer = False
    tab.presets.use_button.click()
    assert asked.questions == [
        "CDNA3 (MI300) is meant for cdna3 GPUs; this machine's GPU is gfx1100. Use it anyway?"
    ]
    assert ctx.active_preset.ident == "" and Settings.load().general.active_preset == ""
    asked.answer = True
    tab.presets.use_button.click()
    assert ctx.active_preset.ident == "cdna3"
    tab.presets.select("rdna3-consumer")  # suits the gfx1100: no question
    tab.presets.use_button.click()
    assert len(asked.questions) == 2 and ctx.active_preset.ident == "rdna3-consumer"


def test_without_a_known_gpu_nothing_is_marked_and_nothing_asked(qtbot, ctx, folder, asked):
    ctx.inventory.set_current(Inventory(SystemInfo("linux")))
    tab = make_tab(qtbot, ctx, folder)
    assert names(tab) == [f"{name}  (built in)" for name in BUILTIN_NAMES]
    assert not tab.presets.legend_label.isVisibleTo(tab)
    tab.presets.select("cdna3")
    tab.presets.use_button.click()
    assert asked.questions == [] and ctx.active_preset.ident == "cdna3"
    ctx.inventory.set_current(RX7900)  # found later: the marks follow
    assert names(tab) == BUILTIN_LISTED


def test_effects_read_in_words_with_sources_in_full(qtbot, ctx, folder):
    ctx.inventory.set_current(Inventory(SystemInfo("linux")))  # no GPU known
    preset = Preset(
        "words",
        "Words",
        torch=(
            Item("torch", "tunableop", {"enabled": True, "tuning": False}, "", "pt_tune"),
            Item("torch", "float32_matmul_precision", "high", "TF32.", "https://example.org/tf32"),
        ),
    )
    tab = make_tab(qtbot, ctx, folder, preset)
    tab.presets.select("words")
    details = tab.presets.details
    assert details.description_label.text() == "No description."
    tree = details.items_tree
    rows = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    assert [(r.text(1), r.text(3)) for r in rows] == [
        (
            "on, saved results only",
            "No description.\nSource: pytorch/pytorch aten/src/ATen/cuda/tunable/README.md",
        ),
        ("high", "TF32.\nSource: https://example.org/tf32"),
    ]
    assert rows[1].text(2) == "not checked: no AMD GPU detected"
    assert rows[1].font(2).italic() and rows[1].foreground(2).color() == UNCHECKED
    assert rows[1].foreground(0).color() != GREY  # marked, not greyed: it may apply
    tree.setCurrentItem(rows[1])
    assert details.item_detail.openExternalLinks()
    assert '<a href="https://example.org/tf32">https://example.org/tf32</a>' in (
        details.item_detail.text()
    )


def test_delete_asks_then_removes_and_an_active_preset_becomes_none(qtbot, ctx, folder, asked):
    tab = make_tab(qtbot, ctx, folder, TF32_HIGH)
    tab.presets.select("tf32-high")
    tab.presets.use_button.click()
    asked.answer = False
    tab.presets.delete_button.click()
    assert asked.questions == ["Delete the preset “TF32 high”? A backup of its file is kept."]
    assert (folder / "tf32-high.yaml").is_file()
    asked.answer = True
    tab.presets.list.setFocus()
    qtbot.keyClick(tab.presets.list, Qt.Key.Key_Delete)
    idle(qtbot, tab)
    assert not (folder / "tf32-high.yaml").exists()
    assert names(tab) == BUILTIN_LISTED
    message = (
        "Deleted “TF32 high”. It was the preset jobs ran under: they now run without a preset."
    )
    assert ctx.messages == [message]
    assert ctx.active_preset.label() == "Preset: none"
    # the setting is saved in the background (its lock may wait on another writer)
    qtbot.waitUntil(lambda: Settings.load().general.active_preset == "", timeout=10_000)


def test_duplicate_export_and_import_through_the_store(qtbot, ctx, folder, tmp_path, monkeypatch):
    tab = make_tab(qtbot, ctx, folder)
    tab.presets.select("rdna3-consumer")
    tab.presets.duplicate_button.click()
    idle(qtbot, tab)
    copy = parse_preset((folder / "rdna3-consumer-copy.yaml").read_text(), "copy")
    assert (copy.name, copy.builtin) == ("RDNA3 consumer (copy)", False)
    assert tab.presets.status.text().startswith("Added “RDNA3 consumer (copy)” (")

    out = tmp_path / "out" / "mine.yaml"
    out.parent.mkdir()
    monkeypatch.setattr(presets_panel, "save_file_name", lambda _p, suggested: str(out))
    tab.presets.export_button.click()
    idle(qtbot, tab)
    assert tab.presets.status.text() == f"Exported “RDNA3 consumer (copy)” to {out}."
    exported = parse_preset(out.read_text(), str(out))
    assert exported.items() == copy.items() and exported.name == "RDNA3 consumer (copy)"

    monkeypatch.setattr(presets_panel, "open_file_name", lambda _p: str(out))
    tab.presets.import_button.click()  # a clash of id and name gets a new one
    idle(qtbot, tab)
    assert names(tab)[-2:] == [f"RDNA3 consumer (copy){SUITS}", f"RDNA3 consumer (copy) (2){SUITS}"]
    assert tab.presets.selected_id() == "rdna3-consumer-copy-2"

    out.write_text("id: x\nname: X\narchs: [rdna9]\n")
    tab.presets.import_button.click()
    idle(qtbot, tab)
    assert tab.presets.status.text() == (
        f"{out}, line 3: archs[0]: unknown 'rdna9'; use any, rdna2, rdna3, rdna4, cdna2, "
        "cdna3, cdna4"
    )
    assert len(names(tab)) == len(BUILTIN_NAMES) + 2


def test_a_cancelled_file_dialog_does_nothing(qtbot, ctx, folder, monkeypatch):
    tab = make_tab(qtbot, ctx, folder)
    monkeypatch.setattr(presets_panel, "open_file_name", lambda _p: "")
    monkeypatch.setattr(presets_panel, "save_file_name", lambda _p, _s: "")
    tab.presets.import_button.click()
    tab.presets.export_button.click()
    assert not tab.presets.busy() and tab.presets.status.text() == ""


def test_items_search_filters_and_shows_the_answer(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder)
    items = tab.items
    total = items.list.count()
    assert items.count_label.text() == f"{total} of {total}"
    items.search_edit.setText("碎片")
    assert "enable-flash-sdp" in items.shown_ids() and len(items.shown_ids()) < total
    items.select("enable-flash-sdp")
    shown = items.details.toPlainText()
    assert "torch.backends.cuda.enable_flash_sdp(True)" in shown
    assert "Verdict: A preset setting does what you want: torch sdpa_backends" in shown
    assert "Preset setting: torch sdpa_backends" in shown
    assert items.add_button.isEnabled()
    items.search_edit.setText("texpr")
    assert items.shown_ids() == ["texpr-fuser"]
    assert items.list.item(0).text().endswith(" — not useful on ROCm")
    items.search_edit.setText("zzzz-nothing")
    assert items.shown_ids() == [] and items.count_label.text() == f"0 of {total}"
    assert items.details.toPlainText() == "No item matches “zzzz-nothing”."
    assert not items.add_button.isEnabled()


def test_add_to_preset_copies_a_builtin_then_opens_the_editor(qtbot, ctx, folder, asked):
    tab = make_tab(qtbot, ctx, folder)
    tab.presets.select("safe-defaults")
    tab.items.search_edit.setText("MIOPEN_FIND_MODE")
    assert tab.items.select("miopen-find-mode")
    tab.items.add_button.click()
    assert asked.questions == [
        "“Safe defaults” is built in and cannot be changed. Make a copy of it and add "
        "MIOPEN_FIND_MODE to the copy?"
    ]
    qtbot.waitUntil(lambda: tab.presets.editor is not None, timeout=10_000)
    editor = tab.presets.editor
    assert editor is not None and editor.original is not None
    assert editor.original.id == "safe-defaults-copy"
    row = editor.env_table.currentRow()
    assert editor.env_table.item(row, 0).text() == "MIOPEN_FIND_MODE"
    assert editor.env_table.item(row, 1).text() == ""
    editor.reject()


def test_a_failed_copy_drops_the_add_request_and_no_later_refresh_takes_it(
    qtbot, ctx, folder, asked, monkeypatch
):
    tab = make_tab(qtbot, ctx, folder, TF32_HIGH)

    def refuse(_self: PresetStore, _ident: str) -> Preset:
        raise PanelError("Preset not copied: the disk is full.")

    monkeypatch.setattr(PresetStore, "duplicate", refuse)
    tab.presets.select("safe-defaults")
    tab.items.search_edit.setText("MIOPEN_FIND_MODE")
    assert tab.items.select("miopen-find-mode")
    tab.items.add_button.click()
    idle(qtbot, tab)
    assert tab.presets.status.text() == "Preset not copied: the disk is full."
    tab.presets.select("tf32-high")  # a user preset selected, then an unrelated read
    assert tab.presets.refresh()
    idle(qtbot, tab)
    assert tab.presets.editor is None


def test_verdicts_name_what_to_use_and_never_praise_a_debunked_snippet(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder)
    items = {item.id: item for item in tab.items.items}
    assert verdict_text(items["enable-flash-sdp"]) == (
        "A preset setting does what you want: torch sdpa_backends"
    )
    assert verdict_text(items["texpr-fuser"]) == "Not useful on ROCm"
    assert verdict_text(items["hipblaslt"]) == "Use with care"
    assert {verdict_text(item).split(":")[0] for item in items.values()} == {
        "A preset setting does what you want",
        "Not useful on ROCm",
        "Use with care",
    }


def test_tf32_finds_the_hipblaslt_item_and_its_sources_read_in_full(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder)
    tab.items.search_edit.setText("tf32")
    assert "hipblaslt" in tab.items.shown_ids()
    assert tab.items.select("hipblaslt")
    shown = tab.items.details.toPlainText()
    assert source_text("pt_blas") != "pt_blas"  # a catalogue key, shown as its text
    assert f"{source_text('pt_blas')}\n" in shown
    assert "\npt_blas\n" not in shown
    assert tab.items.details.openExternalLinks()


WRAP = Qt.TextFlag.TextWordWrap
MENU_LETTERS = ["f", "v", "h"]  # the main window's &File, &View, &Help


def mnemonic(text: str) -> str | None:
    """The letter after a single "&" (a "&&" is a literal ampersand)."""
    index = text.replace("&&", "\0\0").find("&")
    return text[index + 1].lower() if 0 <= index < len(text) - 1 else None


def test_every_mnemonic_on_each_page_is_unique(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder)
    tabs = [mnemonic(tab.pages.tabText(i)) for i in range(tab.pages.count())]
    assert tabs == ["p", "i", "k"]
    seen: dict[int, list[str]] = {}
    for page in range(tab.pages.count()):
        tab.pages.setCurrentIndex(page)
        letters = list(MENU_LETTERS) + [letter for letter in tabs if letter]
        for widget in tab.findChildren(QWidget):
            if not widget.isVisibleTo(tab):
                continue
            labelled = isinstance(widget, QLabel) and widget.buddy() is not None
            if isinstance(widget, QAbstractButton) or labelled:
                letters.append(mnemonic(widget.text()) or "")
        letters = [letter for letter in letters if letter]
        seen[page] = letters
        assert len(letters) == len(set(letters)), (page, sorted(letters))
    assert {"a", "b", "t"} <= set(seen[2])  # A:, B:, Repe&titions
    assert "d" in seen[1]  # A&dd to preset…


def test_a_long_what_it_does_wraps_in_full_at_the_column_width(qtbot, ctx, folder):
    tab = make_tab(qtbot, ctx, folder)
    tab.resize(1000, 700)
    tab.presets.select("throughput")
    details = tab.presets.details
    tree = details.items_tree
    metrics = QFontMetrics(tree.font())
    for index in range(tree.topLevelItemCount()):
        row = tree.topLevelItem(index)
        width = tree.header().sectionSize(3) - 8
        needed = metrics.boundingRect(QRect(0, 0, width, 100_000), WRAP, row.text(3)).height()
        assert needed > 2 * metrics.lineSpacing()  # several lines at this width
        assert tree.visualItemRect(row).height() >= needed
    tree.header().resizeSection(2, 400)  # a narrower text column: the rows grow with it
    row = tree.topLevelItem(1)
    width = tree.header().sectionSize(3) - 8
    needed = metrics.boundingRect(QRect(0, 0, width, 100_000), WRAP, row.text(3)).height()
    assert tree.visualItemRect(row).height() >= needed
