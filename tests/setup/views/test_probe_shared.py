"""Setup's probe is shared with the rest of the app (``ctx.probe_result``): About shows it
instead of probing again."""

from __future__ import annotations

import sys
from types import SimpleNamespace

from rocmpanel.setup.views.tab import SetupTab


def test_a_probe_result_is_kept_for_the_app(qtbot, make_tab) -> None:
    tab: SetupTab = make_tab()
    data = {"python_version": "3.12.3", "python_executable": sys.executable}
    changed: list[bool] = []
    tab.ctx.probe_result.changed.connect(lambda: changed.append(True))
    with qtbot.waitSignal(tab.probe_box.probed) as blocker:
        tab.probe_box._on_job_result_received(SimpleNamespace(data=data))
    assert blocker.args[0].python_version == "3.12.3"
    assert tab.ctx.probe_result.data == data and changed == [True]
    assert tab.ctx.probe_result.python == sys.executable  # "" = the panel's own Python
