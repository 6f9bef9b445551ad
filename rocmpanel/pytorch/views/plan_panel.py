"""The install plan for this machine: the GPU (from the app's inventory), the base Python,
the recommended build, its exact pip command, its size and its warnings.

The GPU comes from ``ctx.inventory`` (detected once for every tab; "Detect again" refreshes
it). The base Python (a PATH search) and its version (a subprocess), and the build manifest
(a file), are read through ``run_in_background``; planning itself is pure and runs on each
edit. Sizes follow ``base.units``: VRAM in binary units, downloads in decimal ones.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import partial

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_download, format_memory
from rocmpanel.gui.background import run_in_background
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.knowledge.install_profiles import DEFAULT_PROFILE
from rocmpanel.knowledge.torch_builds import Manifest, Override, load_manifest
from rocmpanel.machine.inventory import Inventory
from rocmpanel.pytorch.plan import InstallPlan
from rocmpanel.pytorch.plan_inputs import (
    Machine,
    base_python_and_version,
    detection_failed,
    machine_from_inventory,
    make_plan,
)


class InstallPlanPanel(QWidget):
    """Target row (GPU, gfx override, Detect again), then the plan (build, command, size,
    index override, warnings). ``plan_changed`` carries each new plan (None: no plan)."""

    plan_changed = Signal(object)  # InstallPlan | None

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.machine: Machine | None = None
        self.base_python: str | None = None  # resolved off the GUI thread with its version
        self.python_version: str | None = None
        self._python_known = False  # the base Python has answered (maybe "unknown")
        self._manifest: Manifest | None = None
        self._manifest_failed = False
        self.plan: InstallPlan | None = None
        self.profile = DEFAULT_PROFILE  # what the install adds to torch (set_profile)
        self._build_ui()
        inventory = ctx.inventory
        inventory.changed.connect(self._on_inventory_changed)
        inventory.failed.connect(self._on_inventory_failed)
        self._read_plan_inputs()
        if inventory.current is not None:
            self._set_machine(machine_from_inventory(inventory.current))
        else:
            self.redetect_button.setEnabled(False)
            inventory.ensure()

    def _build_ui(self) -> None:
        self.gpu_label = QLabel(translate("InstallPlanPanel", "Detecting the GPU…"))
        self.gpu_label.setWordWrap(True)
        self.gfx_edit = QLineEdit()
        self.gfx_edit.setPlaceholderText(translate("InstallPlanPanel", "detected"))
        self.gfx_edit.setToolTip(
            translate("InstallPlanPanel", "Plan for another GPU target, e.g. gfx1100")
        )
        self.gfx_edit.setMaximumWidth(140)
        self.gfx_edit.editingFinished.connect(self.replan)
        self.index_edit = QLineEdit()
        self.index_edit.setPlaceholderText(
            translate("InstallPlanPanel", "planned index (or set a mirror in Settings)")
        )
        self.index_edit.setToolTip(
            translate(
                "InstallPlanPanel", "Install from this index instead, e.g. your own mirror of it"
            )
        )
        self.index_edit.editingFinished.connect(self.replan)
        self.redetect_button = QPushButton(translate("InstallPlanPanel", "&Detect again"))
        self.redetect_button.setToolTip(
            translate("InstallPlanPanel", "Detect the GPUs and the base Python again")
        )
        self.redetect_button.clicked.connect(self.redetect)

        self.build_label = QLabel()
        self.build_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.build_label.setWordWrap(True)
        self.command_edit = QLineEdit()
        self.command_edit.setReadOnly(True)
        self.command_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.command_edit.setToolTip(
            translate("InstallPlanPanel", "The exact pip command the install runs in the new env")
        )
        self.size_label = QLabel()
        self.size_label.setWordWrap(True)
        self.packages_label = QLabel()
        self.packages_label.setWordWrap(True)
        self.packages_label.setTextFormat(Qt.TextFormat.RichText)
        self.packages_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings_label = QLabel()
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setTextFormat(Qt.TextFormat.RichText)

        target_row = QHBoxLayout()
        target_row.addWidget(self.gpu_label, 1)
        target_row.addWidget(QLabel(translate("InstallPlanPanel", "gfx:")))
        target_row.addWidget(self.gfx_edit)
        target_row.addWidget(self.redetect_button)
        form = QFormLayout()
        # Wrapped labels get the height their text needs at the width they get.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(translate("InstallPlanPanel", "Build:"), self.build_label)
        form.addRow(translate("InstallPlanPanel", "Adds:"), self.packages_label)
        form.addRow(translate("InstallPlanPanel", "Command:"), self.command_edit)
        form.addRow(translate("InstallPlanPanel", "Size:"), self.size_label)
        form.addRow(translate("InstallPlanPanel", "Index:"), self.index_edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(target_row)
        layout.addLayout(form)
        layout.addWidget(self.warnings_label)
        self._show_plan(None)

    # -- what the plan needs -----------------------------------------------------------
    @Slot()
    def redetect(self) -> None:
        """Detect the machine again (for every tab) and re-read the plan's inputs."""
        self.redetect_button.setEnabled(False)
        self.gpu_label.setText(translate("InstallPlanPanel", "Detecting the GPU…"))
        self.ctx.inventory.refresh()
        self._read_plan_inputs()

    def _read_plan_inputs(self) -> None:
        """Find the base Python and ask its version (a subprocess); read the build manifest."""
        self._python_known = False
        run_in_background(
            partial(base_python_and_version, self.ctx.settings),
            self._on_python_version_read,
            owner=self,
            what="asking the base Python its version",
        )
        run_in_background(
            load_manifest, self._on_manifest_read, owner=self, what="reading the build manifest"
        )

    def _on_python_version_read(
        self, found: tuple[str, str | None] | None, error: BaseException | None
    ) -> None:
        if error is not None:
            report(error, translate("InstallPlanPanel", "Asking the base Python its version"))
        self.base_python, self.python_version = found or (None, None)
        self._python_known = True
        self._show_machine()
        self.replan()

    def _on_manifest_read(self, manifest: Manifest | None, error: BaseException | None) -> None:
        if error is not None or manifest is None:
            self._manifest, self._manifest_failed = None, True
            if error is not None:
                report(
                    error,
                    translate("InstallPlanPanel", "Reading the PyTorch build manifest"),
                    label=self.warnings_label,
                )
            self._show_plan(None)
            return
        self._manifest, self._manifest_failed = manifest, False
        for problem in manifest.problems:
            self.ctx.notify(problem)
        self.replan()

    @Slot(object)
    def _on_inventory_changed(self, inventory: Inventory) -> None:
        self._set_machine(machine_from_inventory(inventory))

    @Slot(object)
    def _on_inventory_failed(self, error: BaseException) -> None:
        message = report(error, translate("InstallPlanPanel", "Detecting the GPU"))
        current = self.ctx.inventory.current
        if current is None:
            self._set_machine(detection_failed(message))
        else:  # the previous detection still stands
            self._set_machine(machine_from_inventory(current))

    def _set_machine(self, machine: Machine) -> None:
        self.machine = machine
        self.redetect_button.setEnabled(True)
        self._show_machine()
        self.replan()

    def _show_machine(self) -> None:
        machine = self.machine
        if machine is None:
            return
        if machine.gfx:
            vram = f", {format_memory(machine.vram_bytes, digits=1)}" if machine.vram_bytes else ""
            text = translate("InstallPlanPanel", "GPU: <b>{name}</b> ({gfx}{vram})").format(
                name=html.escape(machine.gpu_name or "?"), gfx=machine.gfx, vram=vram
            )
            if machine.rocm_version:
                text += translate("InstallPlanPanel", "; ROCm {version}").format(
                    version=machine.rocm_version
                )
        else:
            text = translate("InstallPlanPanel", "<b>No AMD GPU detected.</b> {note}").format(
                note=html.escape(machine.note)
            )
        if self._python_known:
            version = self.python_version or "?"
            base = self.base_python or str(self.ctx.settings.pytorch.base_python)
            text += "<br>" + translate("InstallPlanPanel", "Base Python {version} ({path})").format(
                version=version, path=html.escape(base)
            )
        else:
            text += "<br>" + translate("InstallPlanPanel", "Base Python …")
        self.gpu_label.setText(text)

    def overrides(self) -> Mapping[str, Override]:
        """The manifest's HSA overrides (for explaining validation failures)."""
        return self._manifest.overrides if self._manifest else {}

    def validation_target(self) -> tuple[str | None, int | None]:
        """(gfx to check against, the GPU's VRAM as sysfs reports it)."""
        machine = self.machine
        gfx = self.gfx_edit.text().strip() or (machine.gfx if machine else None)
        return gfx, machine.vram_bytes if machine else None

    # -- the plan ----------------------------------------------------------------------
    @Slot(str)
    def set_profile(self, profile: str) -> None:
        """Plan for install ``profile`` ("pytorch" or "llm") from now on."""
        if profile != self.profile:
            self.profile = profile
            self.replan()

    @Slot()
    def replan(self) -> None:
        """Plan again from the machine, the base Python and the fields (pure, no disk)."""
        if self.machine is None or not self._python_known:
            return  # the rest arrives shortly
        if self._manifest is None:
            if self._manifest_failed:
                self._show_plan(None)
            return
        plan = make_plan(
            self.ctx.settings,
            self.machine,
            python_version=self.python_version,
            manifest=self._manifest,
            gfx=self.gfx_edit.text().strip() or None,
            index_url=self.index_edit.text().strip() or None,
            profile=self.profile,
        )
        self._show_plan(plan)

    def _show_plan(self, plan: InstallPlan | None) -> None:
        self.plan = plan
        if plan is None:
            self.build_label.setText("—")
            self.command_edit.clear()
            self.size_label.setText("—")
            self.packages_label.setText("—")
        elif not plan.supported:
            self.build_label.setText(
                "<span style='color:#c62828'><b>"
                + translate("InstallPlanPanel", "No install:")
                + f"</b> {html.escape(plan.refusal or '')}</span>"
            )
            self.command_edit.clear()
            self.size_label.setText("—")
            self.packages_label.setText("—")
            self.warnings_label.setText("")
        else:
            preview = (
                " — <b>" + translate("InstallPlanPanel", "preview") + "</b>" if plan.preview else ""
            )
            self.build_label.setText(
                translate(
                    "InstallPlanPanel",
                    "<b>torch {torch}</b> for ROCm {rocm} ({kind}: {url}){preview}",
                ).format(
                    torch=plan.torch_version,
                    rocm=plan.rocm_build,
                    kind=_index_kind(plan.index_kind),
                    url=html.escape(plan.index_url or ""),
                    preview=preview,
                )
                + "<br>"
                + translate("InstallPlanPanel", "Wheels for Python {versions}").format(
                    versions=", ".join(plan.python_versions)
                )
            )
            self.packages_label.setText(_packages_html(plan))
            self.packages_label.setToolTip(_packages_tip(plan))
            self.command_edit.setText(plan.command)
            self.command_edit.setCursorPosition(0)
            self.size_label.setText(
                translate(
                    "InstallPlanPanel",
                    "download ≈ {download}, free disk needed ≈ {disk} (estimates)",
                ).format(
                    download=format_download(plan.download_bytes),
                    disk=format_download(plan.free_disk_bytes),
                )
            )
            items = "".join(f"<li>{html.escape(w)}</li>" for w in plan.warnings)
            self.warnings_label.setText(
                f"<ul style='margin:0; color:#8d5b00'>{items}</ul>" if items else ""
            )
        self.plan_changed.emit(plan)


def _index_kind(kind: str | None) -> str:
    """The manifest's index kind: "index" in words; "find_links" is pip's option name (data)."""
    if kind == "index":
        return translate("InstallPlanPanel", "index")
    return kind or "?"


def _packages_html(plan: InstallPlan) -> str:
    """What the profile adds to torch, then the 4-bit verdict (rich text); why each package
    is in :func:`_packages_tip`."""
    if not plan.extra_packages:
        return translate("InstallPlanPanel", "nothing else (torch, torchvision, torchaudio only)")
    names = html.escape(", ".join(plan.extra_packages))
    colour = "#2e7d32" if plan.four_bit_gpu else "#8d5b00"
    note = html.escape(plan.four_bit_note)
    return f"{names}<br><span style='color:{colour}'>{note}</span>"


def _packages_tip(plan: InstallPlan | None) -> str:
    """Why each added package (the tooltip of the "Adds" line)."""
    if plan is None or not plan.extra_lines:
        return ""
    return "\n".join(plan.extra_lines)
