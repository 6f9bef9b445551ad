"""Set a preset's environment variables for programs outside rocmpanel, through the
environment editor (the Setup tab's): its preview, its backups and its undo.

The preset's variables are only proposed (staged); nothing is written until the user
applies them in the editor. Torch settings live in rocmpanel's workers and have no
variable to persist: the dialog says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.envvars.store import EnvStore
from rocmpanel.envvars.views.editor import EnvEditor
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.presets import Preset

TORCH_NOT_PERSISTED = QT_TRANSLATE_NOOP(
    "PersistDialog",
    "The preset's torch settings ({keys}) are applied by rocmpanel's workers when they start "
    "torch, so they cannot be set for other programs this way. For the allocator and "
    "TunableOp, the Items page names the variables that do the same in any program.",
)
DEMO_NOTE = QT_TRANSLATE_NOOP(
    "PersistDialog",
    "This is a demo: it shows recorded GPUs, not this machine, so nothing is written here.",
)


class PersistDialog(QDialog):
    """The environment editor with ``preset``'s variables staged for this platform."""

    def __init__(
        self,
        ctx: AppContext,
        preset: Preset,
        parent: QWidget | None = None,
        *,
        stores: Mapping[str, EnvStore] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.preset = preset
        self.setWindowTitle(
            translate("PersistDialog", "Set “{name}” for programs outside rocmpanel").format(
                name=preset.name
            )
        )
        self.resize(900, 600)
        self.editor = EnvEditor(ctx, self, stores=stores, environ=environ)
        platform = self.editor.platform
        self.proposed = [item for item in preset.env if platform in item.platforms]
        self.skipped = [item for item in preset.env if platform not in item.platforms]
        intro = translate(
            "PersistDialog",
            "The preset's variables are staged below ({count}). Review them with Preview "
            "changes, then Apply: the files are backed up first and Undo puts them back. "
            "Programs started afterwards get them; rocmpanel's own jobs get them from the "
            "active preset anyway.",
        ).format(count=len(self.proposed))
        self.intro_label = QLabel(intro, self)
        self.intro_label.setWordWrap(True)
        notes: list[str] = []
        if self.skipped:
            names = ", ".join(item.key for item in self.skipped)
            notes.append(
                translate("PersistDialog", "Not for {platform}, so not staged: {names}.").format(
                    platform=platform.title(), names=names
                )
            )
        if preset.torch:
            keys = ", ".join(item.key for item in preset.torch)
            notes.append(translate("PersistDialog", TORCH_NOT_PERSISTED).format(keys=keys))
        if ctx.demo:
            notes.insert(0, translate("PersistDialog", DEMO_NOTE))
        self.notes_label = QLabel("\n".join(notes), self)
        self.notes_label.setWordWrap(True)
        self.notes_label.setVisible(bool(notes))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro_label)
        layout.addWidget(self.notes_label)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)
        self.editor.only_set.setChecked(True)  # the preset's variables, not the catalogue
        if not ctx.demo:
            for item in self.proposed:
                self.editor.propose(item.key, str(item.value))
