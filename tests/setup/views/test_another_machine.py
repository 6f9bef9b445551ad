"""Dead end 3 of issue 13: a diagnosis of another machine (pasted output, the demo) never
changes this one. Its variable fixes are commands to copy for that machine; nothing is
staged in the environment editor and no file is written. Also the no-GPU state's demo
button and the checklist's longest fix texts at the default width."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPushButton

from rocmpanel.base.enums import CheckStatus
from rocmpanel.machine.gpu_model import SystemInfo
from rocmpanel.machine.long_paths import ENABLE_LONG_PATHS
from rocmpanel.setup.checklist import Check, Fix, FixKind
from rocmpanel.setup.remote_fix import (
    LINUX_SET_NOTE,
    for_other_machine,
    linux_commands,
    windows_commands,
)
from rocmpanel.setup.views.checklist_box import ChecklistBox
from rocmpanel.setup.views.tab import DEMO_HEADING, DEMO_NOTE, NO_GPU_DEMO, SetupTab

from .test_tab import _show

RX6700XT_ROCMINFO = "rocminfo_gfx1031_rx6700xt_rocm5.6-5.7.txt"
OVERRIDE_COMMANDS = (
    "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
    "mkdir -p ~/.config/environment.d && echo HSA_OVERRIDE_GFX_VERSION=10.3.0 "
    ">> ~/.config/environment.d/60-rocmpanel.conf"
)


def _fix_button(tab: SetupTab, check_id: str) -> QPushButton | None:
    """The checklist's fix button of ``check_id`` as shown now (the rows a new report
    replaced are deleted first)."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return tab.findChild(QPushButton, f"fix_{check_id}")


def _files(home: Path) -> dict[str, bytes]:
    """Every file under ``home`` with its bytes."""
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}


def test_pasted_rocminfo_is_another_machine_and_changes_nothing_here(
    qtbot, make_tab, shared_fixtures: Path
) -> None:
    tab: SetupTab = make_tab()
    _show(qtbot, tab)
    editor = tab.env_editor  # built and read before the paste: its later state is compared
    qtbot.waitUntil(lambda: not editor.busy, timeout=5000)
    home = Path(os.environ["HOME"])
    before = _files(home)
    requested: list[tuple[str, object]] = []
    tab.env_change_requested.connect(lambda name, value: requested.append((name, value)))
    text = (shared_fixtures / "tools" / RX6700XT_ROCMINFO).read_text(encoding="utf-8")
    with qtbot.waitSignal(tab.report_changed, timeout=10000):
        tab.analyse_texts([text], sources=(RX6700XT_ROCMINFO,))
    assert tab.heading.text() == (
        f"<b>Pasted output — another machine</b> (rocminfo; from {RX6700XT_ROCMINFO})"
    )
    assert tab.report is not None and tab.report.other_machine
    button = _fix_button(tab, "hsa_override")
    assert button is not None and button.text() == "Copy commands"
    assert button.toolTip() == OVERRIDE_COMMANDS
    button.click()
    assert QGuiApplication.clipboard().text() == OVERRIDE_COMMANDS
    assert tab.messages[-1] == f"Copied: {OVERRIDE_COMMANDS}"
    # Nothing was sent to (or staged in) this machine's editor, and no file was written.
    assert requested == [] and editor.staged == {}
    assert tab.pages.currentIndex() == 0  # still the Overview, not the Environment page
    assert _files(home) == before
    # Back to this machine: its own fix stages a change for review again.
    tab.back_button.click()
    assert tab.heading.text() == "<b>This machine</b>"
    _fix_button(tab, "hsa_override").click()
    assert requested == [("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]


def test_the_paste_dialog_says_where_the_texts_came_from(qtbot) -> None:
    from rocmpanel.setup.views.paste_dialog import PasteDialog

    dialog = PasteDialog()
    qtbot.addWidget(dialog)
    assert dialog.sources() == ()
    dialog.text.setPlainText("  \n")
    assert dialog.sources() == ()
    dialog.text.setPlainText("*** Agent 1 ***")
    dialog.extra.append("x")
    dialog.extra_names.append("rocm-smi.txt")
    assert dialog.sources() == ("pasted text", "rocm-smi.txt")


def test_demo_mode_labels_the_gpus_and_never_stages(qtbot, make_tab) -> None:
    tab: SetupTab = make_tab()
    tab.ctx.demo = True
    _show(qtbot, tab)
    assert tab.heading.text() == f"<b>{DEMO_HEADING}</b>"
    assert tab.notes_label.text().startswith(DEMO_NOTE)
    button = _fix_button(tab, "hsa_override")
    assert button is not None and button.text() == "Copy commands"
    button.click()
    assert QGuiApplication.clipboard().text() == OVERRIDE_COMMANDS
    assert tab.env_editor.read_only and tab.env_editor.staged == {}


def test_no_gpu_offers_the_demo_when_there_is_one(qtbot, make_tab) -> None:
    calls: list[str] = []
    tab: SetupTab = make_tab(SystemInfo(os="linux"))
    tab.ctx.show_demo = lambda: calls.append("demo")
    _show(qtbot, tab)
    button = tab.findChild(QPushButton, "show_demo")
    assert button is not None and button.text() == "Show a &demo"
    assert any(label.text() == NO_GPU_DEMO for label in tab.findChildren(QLabel))
    button.click()
    assert calls == ["demo"]


def test_no_gpu_without_a_demo_hook_has_no_button(qtbot, make_tab) -> None:
    tab: SetupTab = make_tab(SystemInfo(os="linux"))
    _show(qtbot, tab)
    assert tab.findChild(QPushButton, "show_demo") is None
    texts = [label.text() for label in tab.findChildren(QLabel)]
    assert "No AMD GPU was found. The checklist below still applies." in texts


def test_commands_for_each_os() -> None:
    assert linux_commands("HIP_VISIBLE_DEVICES", "0") == (
        "export HIP_VISIBLE_DEVICES=0\nmkdir -p ~/.config/environment.d && echo "
        "HIP_VISIBLE_DEVICES=0 >> ~/.config/environment.d/60-rocmpanel.conf"
    )
    assert linux_commands("X", "a b'c") == (
        "export X='a b'\"'\"'c'\nmkdir -p ~/.config/environment.d && echo 'X=a b'\"'\"'c' "
        ">> ~/.config/environment.d/60-rocmpanel.conf"
    )
    assert linux_commands("ROCR_VISIBLE_DEVICES", None) == (
        "unset ROCR_VISIBLE_DEVICES\ngrep -lE '^(export )?ROCR_VISIBLE_DEVICES=' ~/.profile "
        "~/.config/environment.d/*.conf 2>/dev/null"
    )
    assert windows_commands("HIP_VISIBLE_DEVICES", "1") == (
        "$env:HIP_VISIBLE_DEVICES = '1'\n"
        "[Environment]::SetEnvironmentVariable('HIP_VISIBLE_DEVICES', '1', 'User')"
    )
    assert windows_commands("HSA_OVERRIDE_GFX_VERSION", None) == (
        "Remove-Item Env:\\HSA_OVERRIDE_GFX_VERSION -ErrorAction SilentlyContinue\n"
        "[Environment]::SetEnvironmentVariable('HSA_OVERRIDE_GFX_VERSION', $null, 'User')"
    )
    assert windows_commands("P", "%USERPROFILE%\\it's") == (
        "$env:P = '%USERPROFILE%\\it''s'\nNew-ItemProperty -Path 'HKCU:\\Environment' -Name "
        "'P' -Value '%USERPROFILE%\\it''s' -PropertyType ExpandString -Force | Out-Null"
    )
    assert "setx" not in windows_commands("P", "1") + windows_commands("P", None)


def test_only_variable_fixes_are_rewritten() -> None:
    checks = (
        Check("a", "A", CheckStatus.WARN, "Needs it.", Fix(FixKind.ENV_SET, "Set A=1", "A", "1")),
        Check("b", "B", CheckStatus.FAIL, "Denied.", Fix(FixKind.COMMAND, "sudo modprobe amdgpu")),
        Check("c", "C", CheckStatus.PASS, "Fine."),
    )
    a, b, c = for_other_machine(checks, "linux")
    assert a.fix == Fix(FixKind.COMMAND, linux_commands("A", "1"))
    assert a.message == f"Needs it. {LINUX_SET_NOTE}"
    assert (b, c) == checks[1:]


def test_the_longest_fix_texts_fit_the_default_width(qtbot) -> None:
    """The main window opens 1180 px wide; the checklist must fit without a horizontal
    scroll bar (its messages and commands wrap)."""
    longest = [
        windows_commands("PYTORCH_HIP_ALLOC_CONF", "%LOCALAPPDATA%\\expandable_segments"),
        linux_commands("TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL", None),
        ENABLE_LONG_PATHS,
    ]
    box = ChecklistBox()
    qtbot.addWidget(box)
    box.show_checks(
        [
            Check(f"c{i}", "HSA_OVERRIDE_GFX_VERSION", CheckStatus.FAIL, "Why. " * 30, fix)
            for i, fix in enumerate(Fix(FixKind.COMMAND, text) for text in longest)
        ]
        + [
            Check(
                "e",
                "GPU selection",
                CheckStatus.WARN,
                "x",
                Fix(FixKind.ENV_SET, "Set HIP_VISIBLE_DEVICES=0", "HIP_VISIBLE_DEVICES", "0"),
            )
        ]
    )
    assert box.minimumSizeHint().width() <= 1100
