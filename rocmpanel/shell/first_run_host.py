"""The first-run guide's place in the main window: showing it, taking the user to a
step, remembering "Don't show again" (a part of MainWindow, kept apart; the guide itself is
:mod:`rocmpanel.shell.first_run`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.gui import report as reports
from rocmpanel.gui.background import run_in_background

if TYPE_CHECKING:  # for the type checker, the window this part belongs to
    from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget, QVBoxLayout

    from rocmpanel.base.settings import Settings
    from rocmpanel.gui.context import AppContext
    from rocmpanel.shell.first_run import FirstRunGuide

    _Window = QMainWindow
else:
    _Window = object


class GuideHost(_Window):
    """Mixed into MainWindow: the guide at the top of the window."""

    guide: FirstRunGuide | None
    if TYPE_CHECKING:  # what MainWindow provides
        ctx: AppContext
        settings: Settings
        tabs: QTabWidget
        demo_banner: QLabel | None
        _central_layout: QVBoxLayout

        def tab(self, title: str) -> QWidget | None: ...
        def tab_titles(self) -> list[str]: ...
        def notify(self, message: str) -> None: ...

    def show_guide(self, focus: bool = True) -> FirstRunGuide:
        """Show the first-run guide at the top of the window (Help → First-run guide)."""
        if self.guide is None:
            from rocmpanel.shell.first_run import FirstRunGuide

            self.guide = FirstRunGuide(self.ctx)
            self.guide.step_requested.connect(self.go_to_step)
            self.guide.dismissed.connect(self._on_guide_dismissed)
            at = 1 if self.demo_banner is not None else 0
            self._central_layout.insertWidget(at, self.guide)
        self.guide.show()
        self.guide.refresh()
        if focus:
            self.guide.focus_first_step()
        return self.guide

    def go_to_step(self, step: int) -> None:
        """Bring the place of a guide's step to the front, its button focused."""
        from rocmpanel.shell.first_run import CHECK, INSTALL

        title = "Setup" if step == CHECK else "PyTorch"
        tab = self.tab(title)
        if tab is None:
            self.notify(
                translate("MainWindow", "This build has no {tab} tab.").format(
                    tab=translate("Tabs", title)
                )
            )
            return
        self.tabs.setCurrentIndex(self.tab_titles().index(title))
        if step == CHECK:
            tab.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        # The PyTorch tab's buttons, found by name: a tab without them still opens.
        panel = getattr(tab, "installer" if step == INSTALL else "validation", None)
        button = getattr(panel, "install_button" if step == INSTALL else "validate_button", None)
        if isinstance(button, QWidget):
            button.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_guide_dismissed(self) -> None:
        self.settings.general.guide_dismissed = True
        run_in_background(
            self.settings.save, self._on_guide_setting_saved, owner=self, what="saving the guide"
        )

    def _on_guide_setting_saved(self, _notices: object, error: BaseException | None) -> None:
        if error is not None:
            reports.report(error, translate("MainWindow", "Saving the settings"))
