"""PyInstaller runtime hook: give child processes the environment the user started us with.

On Linux the bootloader prepends the bundle's folder to LD_LIBRARY_PATH (keeping the
user's value in LD_LIBRARY_PATH_ORIG) so the frozen interpreter finds its libraries. Every
child would inherit that: the workload Python, pip and rocminfo would then load the
bundle's libstdc++, libz or libssl instead of their own, which breaks ROCm's torch and
system tools in ways that never happen outside the build. This process has already loaded
its libraries when this hook runs (the dynamic loader reads LD_LIBRARY_PATH only at
start-up), so undoing the change here affects only the children.

It also does what CPython's own start-up does for a program run by ``python`` (PEP 538)
and the frozen interpreter skips: where the locale is C or POSIX (LANG unset, or naming a
locale that is not generated on the machine), LC_CTYPE becomes C.UTF-8. Qt needs a UTF-8
locale and otherwise warns on stderr; the language of the window (LANGUAGE, LC_MESSAGES,
LANG) is left as the user set it.
"""

import locale
import os
import sys


def _restore(env: "os._Environ[str]", bundle: str) -> None:
    for name in ("LD_LIBRARY_PATH", "LIBPATH"):  # LIBPATH: AIX, same convention
        original = env.pop(name + "_ORIG", None)
        if original is not None:
            env[name] = original
            continue
        value = env.get(name)
        if value is None:
            continue
        kept = [part for part in value.split(os.pathsep) if part and part != bundle]
        if kept:
            env[name] = os.pathsep.join(kept)
        else:
            del env[name]


_bundle = getattr(sys, "_MEIPASS", None)
if _bundle:
    _restore(os.environ, _bundle)


def _utf8_ctype(env: "os._Environ[str]") -> None:
    if not sys.platform.startswith("linux") or env.get("LC_ALL"):
        return  # LC_ALL is the user's explicit choice, as PEP 538 respects it
    try:
        current = locale.setlocale(locale.LC_CTYPE, "")
    except locale.Error:  # LANG names a locale this machine does not have
        current = "C"
    if current in ("C", "POSIX"):
        try:
            locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
        except locale.Error:
            return  # no C.UTF-8 either (very old C libraries): Qt says so itself
        env["LC_CTYPE"] = "C.UTF-8"


if _bundle:
    _utf8_ctype(os.environ)
