"""The environment-variable editor (a page of the Setup tab).

One row per variable: the value in this process, in each store, and whether the catalogue
accepts it. Changes are staged first (shown as "old → new"), can be previewed as diffs,
and are written to the ticked stores in one step that can be undone.

Reading, applying and undoing touch files and the registry: they run off the GUI thread
through the status line (``gui.status_line``), one at a time, with the buttons disabled
meanwhile. On Windows the WM_SETTINGCHANGE broadcast that follows runs in a thread of its
own (``stores.windows.broadcast_environment_change``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars.catalogue import Status, Verdict, empty_value_refusal, load_catalogue
from rocmpanel.envvars.plan import EnvChange, FilePlan, ValueRefusedError
from rocmpanel.envvars.store import (
    ApplyResult,
    EnvConflictError,
    EnvStore,
    StoreSnapshot,
    StoresRead,
    make_stores,
    read_stores,
)
from rocmpanel.envvars.stores import windows as windows_store
from rocmpanel.envvars.transaction import apply_plans, last_apply, recover_and_read, undo_last
from rocmpanel.envvars.views.dialogs import DiffDialog, ValueDialog, conflict_box
from rocmpanel.envvars.views.sources import sources_html
from rocmpanel.envvars.views.variable_table import VariableTable
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.status_line import StatusLine

# Marked here, translated where shown (``translate("EnvEditor", ...)``).
READING = QT_TRANSLATE_NOOP("EnvEditor", "Reading the environment stores")
APPLYING = QT_TRANSLATE_NOOP("EnvEditor", "Applying the changes")
UNDOING = QT_TRANSLATE_NOOP("EnvEditor", "Undoing the last apply")
DEMO_READ_ONLY = QT_TRANSLATE_NOOP(
    "EnvEditor",
    "Read-only in demo mode: the panel shows recorded GPUs, not this machine, so nothing is "
    "staged or written here. Close the demo to edit this machine's variables.",
)
#: How sure the catalogue is of an entry (its ``status``), as the Sources line says it.
KNOWLEDGE_WORDS = {
    "official": QT_TRANSLATE_NOOP("EnvEditor", "official"),
    "community": QT_TRANSLATE_NOOP("EnvEditor", "community"),
    "unverified": QT_TRANSLATE_NOOP("EnvEditor", "unverified"),
}
APPLY_NOTE = QT_TRANSLATE_NOOP(
    "EnvEditor",
    "New programs get the change; a new login is needed for desktop programs (environment.d).",
)


class EnvEditor(QWidget):
    """Table of variables × stores with staged edits, preview, apply and undo.

    ``loaded`` follows every read of the stores, ``write_finished(ok)`` every apply or undo,
    and ``applied`` a successful one.
    """

    applied = Signal()
    loaded = Signal()
    write_finished = Signal(bool)

    def __init__(
        self,
        ctx: AppContext | None = None,
        parent: QWidget | None = None,
        *,
        stores: Mapping[str, EnvStore] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.catalogue = load_catalogue()
        if stores is None:
            keep = ctx.settings.environment.backups_keep if ctx is not None else None
            stores = make_stores(keep=keep)
        self.stores: dict[str, EnvStore] = dict(stores)
        self.environ = environ if environ is not None else os.environ
        self._notify: Callable[[str], None] | None = ctx.notify if ctx is not None else None
        self.platform = next(iter(self.stores.values())).platform if self.stores else "linux"
        self.snapshots: dict[str, StoreSnapshot] = {}
        self.staged: dict[str, str | None] = {}
        #: What Undo would undo (None: nothing, and Undo is disabled); read with the stores.
        self.undoable: str | None = None
        #: Demo mode: the panel shows recordings, so nothing here is staged or written.
        self.read_only = ctx is not None and ctx.demo
        self._build()
        self.reload()

    @property
    def busy(self) -> bool:
        """True while the stores are being read or written."""
        return self.status.busy

    # ---- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        targets = QHBoxLayout()
        targets.addWidget(QLabel(translate("EnvEditor", "Write to:"), self))
        self.target_boxes: dict[str, QCheckBox] = {}
        for key, store in self.stores.items():
            box = QCheckBox(translate("stores", store.label), self)
            box.setChecked(store.persistent)
            box.setToolTip(translate("stores", store.help))
            box.toggled.connect(self._refresh)
            self.target_boxes[key] = box
            targets.addWidget(box)
        targets.addStretch(1)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText(translate("EnvEditor", "Filter variables"))
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._refresh)
        self.only_set = QCheckBox(translate("EnvEditor", "Only variables that are set"), self)
        self.only_set.toggled.connect(self._refresh)
        targets.addWidget(self.only_set)
        targets.addWidget(self.filter)

        self.table = VariableTable(self.catalogue, self.stores, self.environ, self)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self.edit_selected())

        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)  # the Sources line holds links
        self.details.setOpenExternalLinks(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.details.setMinimumHeight(70)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.about = QLabel(self)  # what holds on this computer: ~/.bash_profile wins, ...
        self.about.setWordWrap(True)
        self.about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.about.setVisible(False)
        self.status = StatusLine(self, self._notify)
        self.status.busy_changed.connect(lambda _busy: self._update_buttons())

        buttons = QHBoxLayout()
        self.add_button = self._button(translate("EnvEditor", "&Add…"), self.add_variable, buttons)
        self.edit_button = self._button(
            translate("EnvEditor", "&Edit…"), self.edit_selected, buttons
        )
        self.remove_button = self._button(
            translate("EnvEditor", "&Remove"), self.remove_selected, buttons
        )
        self.discard_button = self._button(
            translate("EnvEditor", "&Discard changes"), self.discard, buttons
        )
        buttons.addStretch(1)
        self.reload_button = self._button(translate("EnvEditor", "Re&load"), self.reload, buttons)
        self.preview_button = self._button(
            translate("EnvEditor", "&Preview changes…"), self.show_preview, buttons
        )
        self.apply_button = self._button(translate("EnvEditor", "Appl&y"), self.apply, buttons)
        self.undo_button = self._button(
            translate("EnvEditor", "&Undo last apply"), self.undo, buttons
        )
        self.apply_button.setDefault(True)

        layout = QVBoxLayout(self)
        if self.read_only:
            self.demo_label = QLabel(translate("EnvEditor", DEMO_READ_ONLY), self)
            self.demo_label.setWordWrap(True)
            self.demo_label.setStyleSheet("background: #fff3cd; color: #5d4037; padding: 4px;")
            layout.addWidget(self.demo_label)
        layout.addLayout(targets)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.about)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

    def _button(self, text: str, slot: Callable[[], object], row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text, self)
        button.clicked.connect(lambda _checked=False: slot())
        row.addWidget(button)
        return button

    # ---- data -------------------------------------------------------------------------------

    def reload(self) -> bool:
        """Finish an interrupted change (``transaction.recover``), then read every store again,
        in the background (staged changes stay staged); ``loaded`` follows. False when a read
        or write is already running."""
        stores = dict(self.stores)

        def work() -> tuple[StoresRead, str | None]:
            return recover_and_read(stores), last_apply()

        return self.status.run(translate("EnvEditor", READING), work, self._on_read)

    def _on_read(
        self, outcome: tuple[StoresRead, str | None] | None, error: BaseException | None
    ) -> None:
        if error is not None or outcome is None:
            self.status.show_error(
                error or RuntimeError("no result"), translate("EnvEditor", READING)
            )
        else:
            read, self.undoable = outcome
            self._show_read(read)
        self._refresh()
        self.loaded.emit()

    def _show_read(self, read: StoresRead) -> None:
        self.snapshots = dict(read.snapshots)
        self.about.setText(
            "\n".join(
                translate("EnvEditor", "Note: {note}").format(note=line) for line in read.about
            )
        )
        self.about.setVisible(bool(read.about))
        for error in read.errors:  # logs each detail; the problems are shown together below
            self.status.show_error(error, translate("EnvEditor", READING))
        problems = [s.problem for s in self.snapshots.values() if s.problem]
        if problems:  # otherwise what is shown (a change staged meanwhile, say) stays
            self.status.show_message(" ".join([*problems, *read.notes]), error=True)
        elif read.notes:
            self.status.show_message(" ".join(read.notes))

    def target_keys(self) -> list[str]:
        return [key for key, box in self.target_boxes.items() if box.isChecked()]

    def _names(self) -> list[str]:
        names = set(self.staged)
        for snapshot in self.snapshots.values():
            names |= set(snapshot.values)
        if not self.only_set.isChecked():
            names |= set(self.catalogue.known_names())
        else:
            names |= {n for n in self.catalogue.known_names() if n in self.environ}
        needle = self.filter.text().strip().upper()
        return sorted(n for n in names if needle in n.upper())

    def refusal(self, name: str, value: str) -> str | None:
        """Why the editor will not write ``name=value`` although the catalogue accepts the
        value: an empty value (environment.d cannot hold one) or a variable that can break
        the next login (the CLI writes those only with --force)."""
        if value == "":
            return translate(
                "EnvEditor", "Refused: {reason}, or Remove {name} here; nothing was changed."
            ).format(reason=empty_value_refusal(name), name=name)
        danger = self.catalogue.danger(name, value, self.platform)
        if danger is not None:
            return translate(
                "EnvEditor",
                "Refused: {danger} The editor never writes such a value; nothing was changed.",
            ).format(danger=danger)
        return None

    def verdict_for(self, name: str) -> Verdict | None:
        """The check of the value that matters: the staged one, else the stored one."""
        if name in self.staged:
            value = self.staged[name]
            if value is None:
                return Verdict(Status.VALID, translate("EnvEditor", "Will be unset."))
            refused = self.refusal(name, value)
            if refused is not None:
                return Verdict(Status.INVALID, refused)
            return self.catalogue.validate(name, value, self.platform)
        for snapshot in self.snapshots.values():
            if name in snapshot.values:
                return self.catalogue.validate(name, snapshot.values[name], self.platform)
        return None

    # ---- table ------------------------------------------------------------------------------

    def _refresh(self) -> None:
        names = self._names()
        self.table.show_rows(
            names, self.snapshots, self.staged, set(self.target_keys()), self.verdict_for
        )
        self._update_buttons()
        self._on_table_selection_changed()

    def selected_name(self) -> str | None:
        return self.table.selected_name()

    def select(self, name: str) -> None:
        self.table.select(name)

    def _on_table_selection_changed(self) -> None:
        name = self.selected_name()
        if name is None:
            self.details.setText(translate("EnvEditor", "Select a variable to see what it does."))
        else:
            verdict = self.verdict_for(name)
            note = (
                "\n\n" + translate("EnvEditor", "Check: {message}").format(message=verdict.message)
                if verdict and verdict.message
                else ""
            )
            text = html.escape(self.catalogue.describe(name, sources=False) + note)
            info = self.catalogue.lookup(name)
            links = sources_html(self.catalogue.source_texts(name))
            if info is not None and links:
                status = KNOWLEDGE_WORDS.get(info.status, info.status)
                links += " ({})".format(translate("EnvEditor", status))
            self.details.setText(text.replace("\n", "<br>") + (f"<br>{links}" if links else ""))
        self._update_buttons()

    def _update_buttons(self) -> None:
        idle = not self.busy
        has_row = self.selected_name() is not None
        self.add_button.setEnabled(idle)
        self.edit_button.setEnabled(idle and has_row)
        self.remove_button.setEnabled(idle and has_row)
        staged = bool(self.staged)
        valid = all((v := self.verdict_for(n)) is None or v.accepted for n in self.staged)
        self.discard_button.setEnabled(idle and staged)
        self.preview_button.setEnabled(idle and staged)
        self.apply_button.setEnabled(idle and staged and valid and bool(self.target_keys()))
        self.undo_button.setEnabled(idle and self.undoable is not None)
        self.undo_button.setToolTip(
            translate("EnvEditor", "Undo {what}").format(what=self.undoable)
            if self.undoable is not None
            else translate("EnvEditor", "Nothing to undo yet.")
        )
        if self.read_only:
            for button in (self.add_button, self.edit_button, self.remove_button):
                button.setEnabled(False)
            self.apply_button.setEnabled(False)
            self.undo_button.setEnabled(False)
        self.reload_button.setEnabled(idle)
        for box in self.target_boxes.values():
            box.setEnabled(idle)

    # ---- staging ----------------------------------------------------------------------------

    def propose(self, name: str, value: str | None) -> None:
        """Stage a set (or an unset when ``value`` is None) and select its row; nothing is
        written until Apply. Used by the Setup checklist's Fix buttons. In demo mode
        nothing is staged: the status line says why."""
        if self.read_only:
            self.status.show_message(translate("EnvEditor", DEMO_READ_ONLY))
            return
        self.staged[name] = value
        self._refresh()
        self.select(name)
        verdict = self.verdict_for(name)
        if verdict is not None and not verdict.accepted:
            self.status.show_message(verdict.message, error=True)
        else:
            what = (
                translate("EnvEditor", "unset {name}").format(name=name)
                if value is None
                else f"{name}={value}"
            )
            self.status.show_message(
                translate(
                    "EnvEditor", "Staged: {what}. Review with Preview changes, then Apply."
                ).format(what=what)
            )

    def discard(self) -> None:
        self.staged.clear()
        self.status.show_message("")
        self._refresh()

    def _base_value(self, name: str) -> str:
        if name in self.staged and self.staged[name] is not None:
            return str(self.staged[name])
        for key in self.target_keys() or list(self.stores):
            value = self.snapshots.get(key, StoreSnapshot(key, "", {}, None)).values.get(name)
            if value is not None:
                return value
        return ""

    def _run_dialog(self, dialog: QDialog) -> bool:
        return dialog.exec() == QDialog.DialogCode.Accepted

    def add_variable(self) -> None:
        dialog = ValueDialog(self.catalogue, self.platform, parent=self)
        if self._run_dialog(dialog) and dialog.name():
            self.propose(dialog.name(), dialog.value())

    def edit_selected(self) -> None:
        name = self.selected_name()
        if name is None or self.busy or self.read_only:
            return
        dialog = ValueDialog(self.catalogue, self.platform, name, self._base_value(name), self)
        if self._run_dialog(dialog):
            self.propose(name, dialog.value())

    def remove_selected(self) -> None:
        name = self.selected_name()
        if name is not None:
            self.propose(name, None)

    # ---- plan, apply, undo ------------------------------------------------------------------

    def plans(self) -> list[FilePlan]:
        """The plans of the staged changes for the ticked stores (PanelError if refused)."""
        changes = [EnvChange(name, value) for name, value in self.staged.items()]
        refused = [
            text
            for change in changes
            if change.value is not None
            and (text := self.refusal(change.name, change.value)) is not None
        ]
        if refused:
            raise ValueRefusedError(" ".join(refused))
        plans = []
        for key in self.target_keys():
            snapshot = self.snapshots.get(key)
            if snapshot is None:
                raise PanelError(
                    translate("EnvEditor", "{store} has not been read yet; try again.").format(
                        store=translate("stores", self.stores[key].label)
                    )
                )
            if snapshot.problem:
                raise PanelError(snapshot.problem)
            plans.append(self.stores[key].plan(snapshot, changes))
        return plans

    def preview_text(self) -> str:
        """The diffs of the staged changes, after the warnings of their plans (a Windows
        Path near its length limit, a %NAME% that will not expand at logon)."""
        plans = [plan for plan in self.plans() if plan.changed]
        parts = [plan.diff for plan in plans]
        text = "\n".join(parts) if parts else translate("EnvEditor", "Nothing would change.")
        warnings = [
            translate("EnvEditor", "Warning: {warning}").format(warning=warning)
            for plan in plans
            for warning in plan.warnings
        ]
        return "\n\n".join([*warnings, text])

    def show_preview(self) -> None:
        try:
            text = self.preview_text()
        except PanelError as exc:
            self.status.show_error(exc, translate("EnvEditor", "Previewing the changes"))
            return
        dialog = DiffDialog(text, translate("EnvEditor", "Changes to be written"), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def apply(self) -> bool:
        """Start writing the staged changes to the ticked stores; ``write_finished(ok)``
        follows. False when nothing started (a refused plan, or busy). Failures change
        nothing."""
        if self.read_only:
            self.status.show_message(translate("EnvEditor", DEMO_READ_ONLY))
            return False
        if self.busy:
            return False  # the plans would be made from snapshots about to change
        try:
            plans = self.plans()
        except PanelError as exc:
            self.status.show_error(exc, translate("EnvEditor", APPLYING))
            return False
        stores, written = dict(self.stores), dict(self.staged)

        def work() -> tuple[ApplyResult, StoresRead, str | None]:
            return apply_plans(stores, plans), read_stores(stores), last_apply()

        doing = translate("EnvEditor", APPLYING)
        return self.status.run(
            doing, work, lambda outcome, error: self._on_written(outcome, error, doing, written)
        )

    def undo(self) -> bool:
        """Start undoing the last apply; ``write_finished(ok)`` follows (False: busy, or
        demo mode)."""
        if self.read_only:
            self.status.show_message(translate("EnvEditor", DEMO_READ_ONLY))
            return False
        stores = dict(self.stores)

        def work() -> tuple[ApplyResult, StoresRead, str | None]:
            return undo_last(stores), read_stores(stores), last_apply()

        doing = translate("EnvEditor", UNDOING)
        return self.status.run(
            doing, work, lambda outcome, error: self._on_written(outcome, error, doing, {})
        )

    def _on_written(
        self,
        outcome: tuple[ApplyResult, StoresRead, str | None] | None,
        error: BaseException | None,
        doing: str,
        written: dict[str, str | None],
    ) -> None:
        if error is not None or outcome is None:
            if isinstance(error, EnvConflictError):
                self._show_conflict(error, doing)
            else:
                self.status.show_error(error or RuntimeError("no result"), doing)
            self.write_finished.emit(False)
            return
        result, read, self.undoable = outcome
        for name, value in written.items():  # what was staged meanwhile stays staged
            if name in self.staged and self.staged[name] == value:
                del self.staged[name]
        self._show_read(read)
        self._refresh()
        if not any(snapshot.problem for snapshot in read.snapshots.values()):
            if windows_store.TARGET in result.targets:
                note = translate("windows", windows_store.APPLY_NOTE)
                text = f"{result.message} {note}"
            else:
                note = translate("EnvEditor", APPLY_NOTE)
                text = result.message + (f" {note}" if written else "")
            self.status.show_message(" ".join([text, *result.notes]))
        self.write_finished.emit(True)
        self.applied.emit()

    # ---- messages ---------------------------------------------------------------------------

    def _show_conflict(self, exc: EnvConflictError, doing: str) -> None:
        self.status.show_error(exc, doing)
        box = conflict_box(exc, self)
        box.buttonClicked.connect(
            lambda b: (
                self.reload() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole else None
            )
        )
        box.open()
