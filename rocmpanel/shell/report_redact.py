"""Privacy of the health report: user names, the host name and secrets taken out.

A report is meant to be pasted where anyone reads it, so before it is rendered every text
in it goes through a :class:`Redactor`:

- the home folder becomes ``~``; any other ``/home/<name>``, ``/Users/<name>`` or
  ``C:\\Users\\<name>`` becomes ``.../<user>``; the user's name becomes ``<user>`` wherever
  it stands as a word — unless the user asked to keep user names (``--keep-paths``, the
  dialog's "Include user names in paths"), which keeps these;
- the host name becomes ``<host>`` (always: it is never needed to diagnose a GPU), unless
  it is an installer's default that names the distribution ("debian", "ubuntu");
- the user and password in a URL (``https://name:token@host``) become ``<secret>``;
- the value of any variable of this process whose name looks like a secret (KEY, TOKEN,
  SECRET, PASS, AUTH, CREDENTIAL) becomes ``<secret>`` wherever it appears (always). The
  report never lists such values in the first place (``report.env_lines``); this catches
  one that turns up inside another text, a command line or a URL.

A name of one or two characters, or a generic one ("root", "user"), is replaced in paths
only: as a word it would take letters out of ordinary text and identifies no one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from rocmpanel.shell.report_env import SECRET_RE

USER = "<user>"
HOST = "<host>"
SECRET = "<secret>"
MIN_WORD = 3  # shorter names are replaced in paths only
MIN_SECRET = 6  # shorter "secrets" (PASS=1) would take digits out of every figure
GENERIC = frozenset({"root", "user", "admin", "administrator", "localhost", "localdomain"})
#: Host names installers give by default: they name the distribution in the OS line, not
#: the machine, and identify no one ("<host> GNU/Linux 12" helps no reader).
DEFAULT_HOSTS = frozenset(
    {"debian", "ubuntu", "fedora", "kali", "archlinux", "archiso", "raspberrypi", "linux"}
)
#: Words the report itself is written with: a user or host called so ("gpu", "rocm") is
#: taken out of paths only, or "AMD GPU" would read "AMD <user>" all through the report.
REPORT_WORDS = frozenset(
    {"amd", "gpu", "gpus", "cpu", "rocm", "hip", "cuda", "linux", "python", "torch",
     "pytorch", "radeon", "instinct", "driver", "kernel", "report", "data", "test", "dev"}
)  # fmt: skip
# Where a path may start: not inside another path (/srv/home/alice is not ~ for /home/alice).
_PATH_START = r"(?<![^\s:;=,'\"(\[])"
# The user and password of a URL (https://name:token@mirror/): always a secret.
_URL_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")

_OTHER_HOMES = re.compile(
    r"(?P<base>/home/|/Users/|[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/])"
    r"(?P<name>[^/\\\s:;'\"<>|]+)",
    re.IGNORECASE,
)


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", re.IGNORECASE)


@dataclass(frozen=True)
class Redactor:
    """Replaces what identifies the user in a text. Build it with :meth:`for_this_machine`."""

    home: str = ""
    users: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    keep_paths: bool = False

    @classmethod
    def for_this_machine(
        cls,
        keep_paths: bool = False,
        environ: Mapping[str, str] | None = None,
        *,
        extra_users: tuple[str, ...] = (),
    ) -> Redactor:
        """The redactor of this process's user, host and secret-named variables."""
        environ = os.environ if environ is None else environ
        users = {*extra_users}
        for key in ("USER", "USERNAME", "LOGNAME"):
            if environ.get(key):
                users.add(environ[key])
        # No passwd entry (a container): the variables above are all there is.
        with contextlib.suppress(OSError, KeyError, ImportError):
            users.add(getpass.getuser())
        home = environ.get("HOME") or environ.get("USERPROFILE") or ""
        hosts = {environ.get("COMPUTERNAME", ""), environ.get("HOSTNAME", "")}
        with contextlib.suppress(OSError):
            hosts.add(socket.gethostname())
        hosts |= {h.split(".")[0] for h in hosts}
        secrets = {
            value
            for name, value in environ.items()
            if SECRET_RE.search(name) and len(value.strip()) >= MIN_SECRET
        }
        return cls(
            home=home.rstrip("/\\") if len(home.rstrip("/\\")) > 1 else "",
            users=tuple(sorted(u for u in users if u)),
            hosts=tuple(sorted((h for h in hosts if h), key=len, reverse=True)),
            secrets=tuple(sorted(secrets, key=len, reverse=True)),
            keep_paths=keep_paths,
        )

    def text(self, value: str) -> str:
        """``value`` with secrets, the host name and (unless kept) user names replaced."""
        for secret in self.secrets:  # first: a secret may contain anything below
            value = value.replace(secret, SECRET)
        value = _URL_USERINFO.sub(SECRET + "@", value)
        for host in self.hosts:
            if host.lower() not in GENERIC | DEFAULT_HOSTS | REPORT_WORDS and len(host) >= MIN_WORD:
                value = _word(host).sub(HOST, value)
        if self.keep_paths:
            return value
        if self.home:
            value = re.sub(rf"{_PATH_START}{re.escape(self.home)}(?=$|[/\\\s:;'\"]|\Z)", "~", value)
        value = _OTHER_HOMES.sub(lambda m: m.group("base") + USER, value)
        for user in self.users:
            if user.lower() not in GENERIC | REPORT_WORDS and len(user) >= MIN_WORD:
                value = _word(user).sub(USER, value)
        return value


T = TypeVar("T")


def redact(value: T, redactor: Redactor) -> T:
    """A copy of ``value`` (a report dataclass, a tuple, a string) with every text in it
    passed through ``redactor``; other values are kept."""
    result: T = _redact(value, redactor)
    return result


def _redact(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, tuple):
        return tuple(_redact(v, redactor) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _redact(getattr(value, f.name), redactor)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    return value
