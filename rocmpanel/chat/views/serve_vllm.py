"""The Serve panel's "When one GPU is not enough" box: the vLLM-on-ROCm command to run instead.

rocmpanel serves one model on one device, one request at a time; vLLM shards a model over
several GPUs (tensor parallel) and batches requests. The box shows the equivalent command
for the same model over the machine's AMD GPUs, from :func:`rocmpanel.chat.vllm.vllm_command`
(its facts and their sources live in ``resources/serve.yaml``), with a Copy button, its notes
and its sources as links. It is collapsed until opened; the command is built off the GUI
thread (it reads the resource file) the first time it is needed for a model.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.chat.vllm import VllmCommand, vllm_command
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.gpu_picker import current_choice
from rocmpanel.gui.report import user_message

TITLE = QT_TRANSLATE_NOOP("VllmBox", "When one GPU is not enough")
NO_MODEL = QT_TRANSLATE_NOOP("VllmBox", "Load a model to see the vLLM command for it.")


@dataclass(frozen=True)
class Target:
    """What the command is for: the model folder, the GPUs (HIP indices), their gfx
    targets, the port, and the machine's OS ("linux" or "windows")."""

    model_dir: str
    gpus: tuple[int, ...]
    gfx: tuple[str, ...]
    port: int
    os_name: str


def target_for(ctx: AppContext, model_dir: str, port: int) -> Target:
    """The GPUs jobs run on (the status bar's choice; by default the discrete ones: tensor
    parallel needs cards alike), numbered in the order the runtime lists them."""
    # As last read (the status bar's GPU button reads it off this thread after start-up).
    choice = ctx.gpu_choice.choice or current_choice(ctx)
    gfx = tuple(dict.fromkeys(g.gfx for g in choice.gpus if g.gfx))
    inventory = ctx.inventory.current
    os_name = inventory.system.os if inventory is not None else ""
    return Target(model_dir, choice.indices, gfx, port, os_name)


def build(target: Target) -> VllmCommand:
    """The command for ``target`` (reads resources/serve.yaml: run it off the GUI thread)."""
    return vllm_command(
        target.model_dir, target.gpus, port=target.port, gfx=target.gfx, os_name=target.os_name
    )


def sources_html(sources: tuple[str, ...]) -> str:
    links = (f'<a href="{html.escape(s)}">{html.escape(s)}</a>' for s in sources)
    return translate("VllmBox", "Sources: {links}").format(links="<br>".join(links))


def command_box(body: QVBoxLayout, name: str, lines: int) -> tuple[QPlainTextEdit, QPushButton]:
    """A read-only, monospaced command with its Copy button, added to ``body`` (``name``:
    what the command is, in the window's language, for screen readers)."""
    edit = QPlainTextEdit()
    edit.setReadOnly(True)
    edit.setAccessibleName(name)
    edit.setTabChangesFocus(True)
    edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    edit.setFixedHeight(edit.fontMetrics().lineSpacing() * lines + 12)
    body.addWidget(edit)
    button = QPushButton(translate("VllmBox", "Copy"))
    button.setAccessibleName(translate("VllmBox", "Copy the {name}").format(name=name))
    button.clicked.connect(lambda: QGuiApplication.clipboard().setText(edit.toPlainText()))
    row = QHBoxLayout()
    row.addWidget(button)
    row.addStretch(1)
    body.addLayout(row)
    return edit, button


class VllmBox(QWidget):
    """A collapsible box with the vLLM command for the loaded model."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.target: Target | None = None
        self._shown_for: Target | None = None  # the target the text is for
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.toggle = QToolButton()
        self.toggle.setText(translate("VllmBox", TITLE))
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setAutoRaise(True)
        self.toggle.setAccessibleName(translate("VllmBox", TITLE))
        self.toggle.setToolTip(
            translate("VllmBox", "The vLLM-on-ROCm command to run instead, over several GPUs.")
        )
        self.toggle.toggled.connect(self._on_toggled)
        column.addWidget(self.toggle)
        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(12, 0, 0, 0)
        self.intro_label = QLabel()
        self.intro_label.setWordWrap(True)
        body.addWidget(self.intro_label)
        self.command_edit, self.copy_button = command_box(
            body, translate("VllmBox", "vLLM command"), 6
        )
        self.docker_label = QLabel(translate("VllmBox", "Or in vLLM's ROCm container (Docker):"))
        self.docker_label.setWordWrap(True)
        body.addWidget(self.docker_label)
        self.docker_edit, self.copy_docker_button = command_box(
            body, translate("VllmBox", "vLLM Docker command"), 11
        )
        self.notes_label = QLabel()
        self.notes_label.setWordWrap(True)
        body.addWidget(self.notes_label)
        self.sources_label = QLabel()
        self.sources_label.setWordWrap(True)
        self.sources_label.setTextFormat(Qt.TextFormat.RichText)
        self.sources_label.setOpenExternalLinks(True)
        self.sources_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        body.addWidget(self.sources_label)
        column.addWidget(self.body)
        self.body.hide()
        self._show_text(translate("VllmBox", NO_MODEL))

    def set_target(self, target: Target | None) -> None:
        """The model (and port) the command is for; None: no model loaded."""
        self.target = target
        if not self.body.isHidden():
            self._refresh()

    def _on_toggled(self, opened: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if opened else Qt.ArrowType.RightArrow)
        self.body.setVisible(opened)
        if opened:
            self._refresh()

    def _refresh(self) -> None:
        target = self.target
        if target is None:
            self._shown_for = None
            self._show_text(translate("VllmBox", NO_MODEL))
            return
        if target == self._shown_for:
            return
        self._shown_for = target
        self._show_text(translate("VllmBox", "Building the command…"))
        run_in_background(
            lambda: build(target),
            lambda built, error: self._on_built(target, built, error),
            owner=self,
            what="building the vLLM command",
        )

    def _on_built(
        self, target: Target, built: VllmCommand | None, error: BaseException | None
    ) -> None:
        if target != self._shown_for:
            return  # asked for another model or port since
        if built is None:
            self._shown_for = None  # try again next time
            doing = translate("VllmBox", "Building the vLLM command")
            self._show_text(user_message(error, doing) if error else "")
            return
        cards = len(target.gpus)
        if cards > 1:
            intro = translate(
                "VllmBox",
                "Run this instead (vLLM on ROCm, tensor parallel over {cards} GPUs), with the "
                "key in {variable}:",
            ).format(cards=cards, variable="$ROCMPANEL_API_KEY")
        else:
            intro = translate(
                "VllmBox",
                "Run this instead (vLLM on ROCm, on one GPU), with the key in {variable}:",
            ).format(variable="$ROCMPANEL_API_KEY")
        self._show_text(intro, built)

    def _show_text(self, intro: str, command: VllmCommand | None = None) -> None:
        self.intro_label.setText(intro)
        self.command_edit.setPlainText(command.text if command else "")
        self.docker_edit.setPlainText(command.docker_text if command else "")
        shown = (self.command_edit, self.copy_button, self.docker_label, self.docker_edit)
        for widget in (*shown, self.copy_docker_button):
            widget.setVisible(command is not None)
        notes = command.notes if command else ()
        self.notes_label.setText("\n".join(f"• {n}" for n in notes))
        self.notes_label.setVisible(bool(notes))
        sources = command.sources if command else ()
        self.sources_label.setText(sources_html(sources) if sources else "")
        self.sources_label.setVisible(bool(sources))
