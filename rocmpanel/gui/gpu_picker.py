"""The GPUs jobs run on: a status-bar button that shows the choice and changes it.

The menu lists every GPU the runtime sees, by index (the runtime's order), name and PCI
address, plus "Default" (the discrete GPUs) and "All GPUs". The choice is saved in the
settings (``general.job_gpus``, by PCI address) in the background and reaches every job
started afterwards through the window's job environment (:mod:`rocmpanel.jobs.gpu_choice`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from functools import partial

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QMessageBox, QToolButton, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_gib
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs import gpu_choice
from rocmpanel.jobs.gpu_choice import GpuChoice
from rocmpanel.machine.gpu_model import GpuInfo


def known_gpus(ctx: AppContext, platform: str = sys.platform) -> tuple[GpuInfo, ...] | None:
    """The GPUs as the window knows them: the inventory's on Windows (the choice counts
    those hipInfo numbers, :func:`gpu_choice.hip_order`) and in the demo (recorded GPUs);
    None on Linux, where the KFD topology is read when asked (a few small files)."""
    if platform == "win32" or ctx.demo:
        inventory = ctx.inventory.current
        return tuple(inventory.gpus) if inventory is not None else ()
    return None


def current_choice(ctx: AppContext, platform: str = sys.platform) -> GpuChoice:
    """The choice jobs started now get (reads sysfs on Linux: quick, but not free)."""
    return gpu_choice.resolve(
        None,
        platform=platform,
        known=known_gpus(ctx, platform),
        saved=ctx.settings.general.job_gpus,
    )


def refresh_choice(ctx: AppContext) -> None:
    """Read the choice again off the GUI thread (sysfs and the PCI table) into
    ``ctx.gpu_choice``; a reading under way is not doubled."""
    holder = ctx.gpu_choice
    if holder.reading:
        return
    holder.reading = True
    saved, known = ctx.settings.general.job_gpus, known_gpus(ctx)

    def done(choice: GpuChoice | None, error: BaseException | None) -> None:
        holder.reading = False
        if error is not None or choice is None:
            report(
                error or RuntimeError("nothing was read"),
                translate("gpu_picker", "Reading the GPUs for jobs"),
            )
            return
        now = ctx.settings.general.job_gpus
        if now != saved:  # chosen again while reading: the setting in memory counts
            choice = gpu_choice.choose(choice.available, gpu_choice.saved_wanted(now))
        holder.set(choice)

    run_in_background(
        lambda: gpu_choice.resolve(None, known=known, saved=saved),
        done,
        owner=holder,
        what="reading the GPUs for jobs",
    )


def _gpu_action_text(index: int, gpu: GpuInfo) -> str:
    extra = []
    if gpu.vram_bytes:
        extra.append(format_gib(gpu.vram_bytes))
    if gpu.integrated:
        extra.append(translate("GpuPicker", "integrated"))
    tail = f" · {' · '.join(extra)}" if extra else ""
    return gpu_choice.gpu_text(index, gpu) + tail


class GpuPicker(QToolButton):
    """``GPUs: …`` in the status bar; its menu chooses the GPUs jobs run on.
    ``changed`` follows each choice the user makes (after the setting is set in memory)."""

    changed = Signal()
    refreshed = Signal()  # a reading of the GPUs is shown

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("statusGpus")
        self.setAutoRaise(True)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setAccessibleName(translate("GpuPicker", "GPUs for jobs"))
        self.menu_ = QMenu(self)
        self.menu_.aboutToShow.connect(self._fill_menu)
        self.setMenu(self.menu_)
        self.choice: GpuChoice | None = None
        self.setText(translate("GpuPicker", "GPUs: …"))
        ctx.gpu_choice.changed.connect(self._on_choice_changed)
        # Read when the window's inventory arrives (after the first paint), on each new
        # detection, and each time the menu opens (the menu shows the last reading).
        ctx.inventory.changed.connect(self.refresh)

    @Slot()
    def refresh(self) -> None:
        """Read the runtime's GPUs again (in the background); the button follows."""
        refresh_choice(self.ctx)

    @Slot()
    def _on_choice_changed(self) -> None:
        choice = self.ctx.gpu_choice.choice
        if choice is not None:
            self._show(choice)
        self.refreshed.emit()

    def _set(self, wanted_text: str) -> None:
        """Share the choice ``wanted_text`` makes among the GPUs last read (no disk)."""
        if self.choice is not None:
            wanted = gpu_choice.saved_wanted(wanted_text)
            self.ctx.gpu_choice.set(gpu_choice.choose(self.choice.available, wanted))

    def _show(self, choice: GpuChoice) -> None:
        self.choice = choice
        if not choice.available:
            self.setText(translate("GpuPicker", "GPUs: none"))
        elif choice.count == 1:
            self.setText(translate("GpuPicker", "GPU: {index}").format(index=choice.indices[0]))
        else:
            indices = ",".join(str(i) for i in choice.indices)
            self.setText(translate("GpuPicker", "GPUs: {indices}").format(indices=indices))
        lines = [translate("GpuPicker", "Jobs run on: {gpus}.").format(gpus=choice.label)]
        lines += choice.notes
        if choice.env:
            env = ", ".join(f"{k}={v}" for k, v in choice.env.items() if v is not None)
            lines.append(translate("GpuPicker", "They get {variables}.").format(variables=env))
        lines.append(translate("GpuPicker", "Click to choose."))
        self.setToolTip("\n".join(lines))

    def _fill_menu(self) -> None:
        """The menu from the last reading (none yet: say so); a new reading starts."""
        self.menu_.clear()
        choice = self.choice
        self.refresh()
        if choice is None:
            wait = self.menu_.addAction(translate("GpuPicker", "Reading the GPUs…"))
            wait.setEnabled(False)
            return
        saved = gpu_choice.saved_wanted(self.ctx.settings.general.job_gpus)
        title = self.menu_.addAction(translate("GpuPicker", "Jobs run on:"))
        title.setEnabled(False)
        group = QActionGroup(self.menu_)
        group.setExclusive(True)
        default = self._add(
            translate("GpuPicker", "Default: the discrete GPUs"),
            saved is None,
            partial(self.choose, None),
            group,
        )
        default.setToolTip(
            translate("GpuPicker", "An integrated GPU next to a discrete one is left out.")
        )
        self._add(translate("GpuPicker", "All GPUs"), saved == (), partial(self.choose, ()), group)
        self.menu_.addSeparator()
        if not choice.available:
            none = self.menu_.addAction(
                translate("GpuPicker", "No AMD GPU is visible to ROCm on this machine")
            )
            none.setEnabled(False)
        chosen = set(choice.gpus)
        for index, gpu in enumerate(choice.available):
            action = self._add(
                _gpu_action_text(index, gpu),
                gpu in chosen,
                partial(self._toggle, gpu),
                None,
            )
            action.setEnabled(bool(gpu.bdf))
        self.menu_.addSeparator()
        about = self.menu_.addAction(translate("GpuPicker", "What this sets…"))
        about.triggered.connect(self.explain)

    def _add(
        self, text: str, checked: bool, slot: Callable[[], None], group: QActionGroup | None
    ) -> QAction:
        action = self.menu_.addAction(text)
        action.setCheckable(True)
        action.setChecked(checked)
        if group is not None:
            group.addAction(action)
        action.triggered.connect(lambda _checked=False, s=slot: s())
        return action

    def _toggle(self, gpu: GpuInfo) -> None:
        choice = self.choice
        if choice is None:
            return
        chosen = [g for g in choice.gpus if g.bdf]
        if gpu in chosen:
            if len(chosen) == 1:
                self.ctx.notify(
                    translate("GpuPicker", "At least one GPU stays chosen; pick another first.")
                )
                return
            chosen.remove(gpu)
        else:
            chosen.append(gpu)
        order = {g: i for i, g in enumerate(choice.available)}
        self.choose(tuple(g.bdf for g in sorted(chosen, key=order.__getitem__) if g.bdf))

    def choose(self, wanted: Sequence[str] | None) -> None:
        """Make ``wanted`` (PCI addresses; () = all; None = default) the choice: it holds at
        once for jobs started from now on; the settings file is written in the background."""
        general = self.ctx.settings.general
        before = general.job_gpus
        general.job_gpus = gpu_choice.saved_text(None if wanted is None else tuple(wanted))
        self._set(general.job_gpus)
        self.changed.emit()
        if self.choice is not None:
            self.ctx.notify(
                translate("GpuPicker", "Jobs started from now on run on {gpus}.").format(
                    gpus=self.choice.label
                )
            )
        if self.ctx.demo:
            return  # the demo never writes the user's settings
        run_in_background(
            self.ctx.settings.save,
            partial(self._on_saved, general.job_gpus, before),
            owner=self,
            what="saving the GPU choice",
        )

    def _on_saved(
        self, chosen: str, before: str, _notes: object, error: BaseException | None
    ) -> None:
        if error is None:
            return
        report(error, translate("GpuPicker", "Saving the GPU choice"))
        if self.ctx.settings.general.job_gpus == chosen:
            self.ctx.settings.general.job_gpus = before
            self._set(before)
            self.changed.emit()

    @Slot()
    def explain(self) -> None:
        """What the choice does, one sentence per variable."""
        choice = self.choice
        if choice is None:
            return
        lines = [translate("GpuPicker", "Jobs run on {gpus}.").format(gpus=choice.label)]
        lines += [*choice.notes, ""]
        if choice.env:
            for name, value in choice.env.items():
                shown = translate("GpuPicker", "removed") if value is None else f"= {value}"
                lines.append(f"{name} {shown}: {gpu_choice.MEANINGS[name]}")
        else:
            lines.append(
                translate("GpuPicker", "Jobs get no visibility variable: they see every GPU.")
            )
        lines.append(
            "\n"
            + translate(
                "GpuPicker",
                "GPUs are numbered in the runtime's order (the KFD topology), which can differ "
                "from rocm-smi's card numbers.",
            )
        )
        QMessageBox.information(self, translate("GpuPicker", "GPUs for jobs"), "\n".join(lines))
