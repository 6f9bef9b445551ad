"""The words of the Chat tab's Serve panel: its tooltips, notes and messages, in one place
(the tests compare them exactly). The constants are English, marked for translation in the
"ServePanel" context; :func:`shown` gives the text in the window's language."""

from __future__ import annotations

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.chat.requirements import Missing, describe_missing
from rocmpanel.jobs.protocol import WorkerError

SWITCH_TEXT = QT_TRANSLATE_NOOP("ServePanel", "Serve over HTTP")
SWITCH_TIP = QT_TRANSLATE_NOOP(
    "ServePanel",
    "Serve the loaded model over an OpenAI-compatible API on 127.0.0.1 (this computer "
    "only), with an API key. Chat keeps working; replies and requests take turns.",
)
NOT_READY_TIP = QT_TRANSLATE_NOOP(
    "ServePanel", "Load a model first: the server answers with the model loaded here."
)
DEMO_TIP = QT_TRANSLATE_NOOP(
    "ServePanel",
    "Serving needs a real model loaded on this machine; the demo has recordings only.",
)
HOST_NOTE = QT_TRANSLATE_NOOP(
    "ServePanel",
    "Listens on 127.0.0.1 only. To listen on another address, run rocmpanel serve --host "
    "ADDRESS (anyone who can reach it and has the key can use the model).",
)
STOPPED = QT_TRANSLATE_NOOP(
    "ServePanel", "Stopped: the model stays loaded for Chat; Unload frees its memory."
)
STOPPED_WHY = {
    "unload": QT_TRANSLATE_NOOP("ServePanel", "Stopped: the model was unloaded."),
    "load": QT_TRANSLATE_NOOP(
        "ServePanel",
        "Stopped: another model is loading. Switch Serve on again when it is ready.",
    ),
    "exit": QT_TRANSLATE_NOOP(
        "ServePanel", "Stopped: the chat worker ended, and the server with it."
    ),
}
REFRESH_MS = 1000  # requests per minute age while serving
# On: green, so the state reads at a glance (the accessible checked state says it too).
SWITCH_STYLE = (
    "QPushButton:checked { background-color:#cdebd3; border:1px solid #3f8a52; "
    "border-radius:3px; padding:4px 8px; color:#14421f; }"
)


def shown(text: str) -> str:
    """One of this module's constants in the window's language."""
    return translate("ServePanel", text)


def port_in_use_text(port: int) -> str:
    return translate(
        "ServePanel",
        "Port {port} is already in use by another program. Pick another port and switch "
        "Serve on again.",
    ).format(port=port)


def missing_text(missing: tuple[Missing, ...], can_install: bool) -> str:
    """What serving lacks in the workload Python, and the fix (the chat's install path)."""
    return translate(
        "ServePanel", "Serving needs packages the workload Python lacks. {fix}"
    ).format(fix=describe_missing(missing, can_install=can_install))


def error_text(error: WorkerError) -> str:
    """A failed serve's message from the worker, with its suggestion."""
    suggestion = str(error.data.get("suggestion") or "")
    return error.message + (f" {suggestion}" if suggestion else "")
