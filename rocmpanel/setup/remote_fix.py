"""Fixes for another machine: what a diagnosis of pasted output (or a demo) offers.

A diagnosis of pasted tool output describes the machine the output came from, not this
one. Its variable fixes must never be staged in this machine's environment editor: they
become commands to copy and run on that machine, in its OS's shell. On Linux the first
line sets the variable in the open shell and the second keeps it for desktop programs
from the next login through systemd's environment.d (``KEY=VALUE`` lines in
``~/.config/environment.d/*.conf``, read by the user manager:
https://man.archlinux.org/man/environment.d.5.en; ssh and console logins read
``~/.profile`` instead, see FACTS.md §5). On Windows, PowerShell sets it for the open
window and in ``HKCU\\Environment`` (``EnvironmentVariableTarget.User``:
https://learn.microsoft.com/dotnet/api/system.environmentvariabletarget); a value holding
``%NAME%`` is written as REG_EXPAND_SZ so that it expands at logon. ``setx`` is never
offered: it truncates long values (FACTS.md §5).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import replace

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.setup.checklist import Check, Fix, FixKind

#: The file rocmpanel's own environment store writes (``envvars/stores/linux.py``): a
#: rocmpanel run later on that machine shows and manages what these lines add.
ENVIRONMENT_D_FILE = "~/.config/environment.d/60-rocmpanel.conf"

LINUX_SET_NOTE = QT_TRANSLATE_NOOP(
    "remote_fix",
    "On that machine, the first line sets it in the open shell; the second keeps it for "
    "desktop programs from the next login (ssh and console logins read ~/.profile).",
)
LINUX_UNSET_NOTE = QT_TRANSLATE_NOOP(
    "remote_fix",
    "On that machine, the first line unsets it in the open shell; the second lists the "
    "files that still set it: delete its line there, then log in again.",
)
WINDOWS_NOTE = QT_TRANSLATE_NOOP(
    "remote_fix",
    "In PowerShell on that machine: the first line changes the open window, the second "
    "your user variables (HKCU\\Environment); programs started afterwards see the change.",
)


def _ps_quote(text: str) -> str:
    """``text`` as a single-quoted PowerShell string (a ' is doubled)."""
    return "'" + text.replace("'", "''") + "'"


def linux_commands(name: str, value: str | None) -> str:
    """Shell lines that set (or unset, ``value`` None) ``name`` on a Linux machine."""
    if value is None:
        return (
            f"unset {name}\n"
            f"grep -lE '^(export )?{name}=' ~/.profile ~/.config/environment.d/*.conf 2>/dev/null"
        )
    line = shlex.quote(f"{name}={value}")
    return (
        f"export {name}={shlex.quote(value)}\n"
        f"mkdir -p ~/.config/environment.d && echo {line} >> {ENVIRONMENT_D_FILE}"
    )


def windows_commands(name: str, value: str | None) -> str:
    """PowerShell lines that set (or unset, ``value`` None) ``name`` on a Windows machine."""
    quoted = _ps_quote(name)
    if value is None:
        return (
            f"Remove-Item Env:\\{name} -ErrorAction SilentlyContinue\n"
            f"[Environment]::SetEnvironmentVariable({quoted}, $null, 'User')"
        )
    first = f"$env:{name} = {_ps_quote(value)}"
    if "%" in value:  # expandable: SetEnvironmentVariable would store it as plain REG_SZ
        return (
            f"{first}\nNew-ItemProperty -Path 'HKCU:\\Environment' -Name {quoted} "
            f"-Value {_ps_quote(value)} -PropertyType ExpandString -Force | Out-Null"
        )
    return f"{first}\n[Environment]::SetEnvironmentVariable({quoted}, {_ps_quote(value)}, 'User')"


def other_machine_fix(fix: Fix, os_name: str) -> tuple[Fix, str]:
    """A variable fix as commands for that machine, and the sentence that explains them.
    Other fixes (commands, advice) are returned as they are, with no sentence."""
    if fix.kind not in (FixKind.ENV_SET, FixKind.ENV_UNSET) or not fix.name:
        return fix, ""
    value = fix.value if fix.kind is FixKind.ENV_SET else None
    if os_name == "windows":
        command = windows_commands(fix.name, value)
        return Fix(FixKind.COMMAND, command), translate("remote_fix", WINDOWS_NOTE)
    note = LINUX_SET_NOTE if value is not None else LINUX_UNSET_NOTE
    return Fix(FixKind.COMMAND, linux_commands(fix.name, value)), translate("remote_fix", note)


def for_other_machine(checks: Iterable[Check], os_name: str) -> tuple[Check, ...]:
    """``checks`` with every variable fix turned into commands to copy for that machine."""
    result = []
    for check in checks:
        if check.fix is None:
            result.append(check)
            continue
        fix, note = other_machine_fix(check.fix, os_name)
        message = f"{check.message} {note}" if note else check.message
        result.append(replace(check, message=message, fix=fix))
    return tuple(result)
