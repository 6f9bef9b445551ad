"""The Monitor tab's alerts: a banner with the newest, a list of all, a desktop notice.

The list keeps the newest ``MAX_ALERTS_SHOWN`` alerts since the panel started. A desktop
notification (through the system tray) is shown only when the setting asks for it and
the desktop has a tray.
"""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel, QListWidget, QStyle, QSystemTrayIcon, QWidget

from rocmpanel.base.i18n import translate
from rocmpanel.monitor.alerts import Alert

MAX_ALERTS_SHOWN = 200


class AlertPanel:
    """Owns the banner, the list and its title label; the tab places them in its layout."""

    def __init__(self, owner: QWidget) -> None:
        self._owner = owner
        self._tray: QSystemTrayIcon | None = None
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "background: #fdecea; color: #8a1c12; padding: 4px; border-radius: 3px;"
        )
        self.banner.hide()
        self.list = QListWidget()
        self.list.setAccessibleName(translate("AlertPanel", "Alerts"))
        self.list.setToolTip(
            translate("AlertPanel", "Alerts raised since the panel started (newest first)")
        )
        self.label = QLabel(translate("AlertPanel", "Alerts: none so far"))

    def show_alert(self, alert: Alert, *, desktop: bool) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(alert.t))
        self.list.insertItem(0, f"{stamp}  {alert.message}")
        while self.list.count() > MAX_ALERTS_SHOWN:
            self.list.takeItem(self.list.count() - 1)
        self.banner.setText(f"⚠ {stamp}  {alert.message}")
        self.label.setText(
            translate("AlertPanel", "Alerts: {count}").format(count=self.list.count())
        )
        self.banner.show()
        if desktop:
            self._notify_desktop(alert.message)

    def _notify_desktop(self, message: str) -> None:
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return
        if self._tray is None:
            icon = self._owner.window().windowIcon()
            if icon.isNull():
                icon = self._owner.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
            self._tray = QSystemTrayIcon(icon, self._owner)
            self._tray.setToolTip(translate("AlertPanel", "rocmpanel telemetry alerts"))
            self._tray.show()
        self._tray.showMessage("rocmpanel", message, QSystemTrayIcon.MessageIcon.Warning, 10_000)

    def shutdown(self) -> None:
        if self._tray is not None:
            self._tray.hide()
