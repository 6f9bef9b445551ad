"""The words of the Chat tab's Serve panel: its tooltips, notes and messages, in one place
(the tests compare them exactly)."""

from __future__ import annotations

from rocmpanel.chat.requirements import Missing, describe_missing
from rocmpanel.jobs.protocol import WorkerError

SWITCH_TEXT = "Serve over HTTP"
SWITCH_TIP = (
    "Serve the loaded model over an OpenAI-compatible API on 127.0.0.1 (this computer "
    "only), with an API key. Chat keeps working; replies and requests take turns."
)
NOT_READY_TIP = "Load a model first: the server answers with the model loaded here."
DEMO_TIP = "Serving needs a real model loaded on this machine; the demo has recordings only."
HOST_NOTE = (
    "Listens on 127.0.0.1 only. To listen on another address, run rocmpanel serve --host "
    "ADDRESS (anyone who can reach it and has the key can use the model)."
)
STOPPED = "Stopped: the model stays loaded for Chat; Unload frees its memory."
STOPPED_WHY = {
    "unload": "Stopped: the model was unloaded.",
    "load": "Stopped: another model is loading. Switch Serve on again when it is ready.",
    "exit": "Stopped: the chat worker ended, and the server with it.",
}
REFRESH_MS = 1000  # requests per minute age while serving
# On: green, so the state reads at a glance (the accessible checked state says it too).
SWITCH_STYLE = (
    "QPushButton:checked { background-color:#cdebd3; border:1px solid #3f8a52; "
    "border-radius:3px; padding:4px 8px; color:#14421f; }"
)


def port_in_use_text(port: int) -> str:
    return (
        f"Port {port} is already in use by another program. Pick another port and switch "
        "Serve on again."
    )


def missing_text(missing: tuple[Missing, ...], can_install: bool) -> str:
    """What serving lacks in the workload Python, and the fix (the chat's install path)."""
    return "Serving needs packages the workload Python lacks. " + describe_missing(
        missing, can_install=can_install
    )


def error_text(error: WorkerError) -> str:
    """A failed serve's message from the worker, with its suggestion."""
    suggestion = str(error.data.get("suggestion") or "")
    return error.message + (f" {suggestion}" if suggestion else "")
