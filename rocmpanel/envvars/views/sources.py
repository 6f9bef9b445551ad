"""The catalogue's sources as a line of links for the editor's help text.

The catalogue keeps each source as a citation (repository, file, commit, what it says);
a person reading the help wants where to look, not commit ids. ``shown_source`` drops the
commit ids from what is displayed (the data keeps them), and ``sources_html`` links each
source: "owner/repo issue N" or "pull N" to that GitHub thread, else a web address it
names, else "owner/repo path" to the repository.
"""

from __future__ import annotations

import html
import re

from rocmpanel.base.i18n import translate

_COMMIT_RES = (
    re.compile(r",?\s*\bcommit [0-9a-f]{7,40}\b"),  # "flag.h, commit 058954eb"
    re.compile(r"\bgit [0-9a-f]{7,40}\b,?\s*"),  # "(git a1cb3cc0, built ...)"
    re.compile(r"\s*\([0-9a-f]{7,40}\)"),  # "2.11.0 (70d99e99)"
    re.compile(r"\s*@[0-9a-f]{7,40}\b"),  # "docs/gpu.md @074d639b"
)
_EMPTY_PARENS_RE = re.compile(r"\s*\(\s*\)")
_URL_RE = re.compile(r"\b(?:https?://)?((?:[a-z0-9-]+\.)+[a-z]{2,}/[^\s,;()]*)", re.IGNORECASE)
_REPO_RE = re.compile(r"^([A-Za-z0-9][\w.-]*/[\w.-]+)\s")
_THREAD_RE = re.compile(r"\b(issue|pull)s?\s+#?(\d+)")


def shown_source(text: str) -> str:
    """``text`` without commit ids (and the brackets they leave empty)."""
    for pattern in _COMMIT_RES:
        text = pattern.sub("", text)
    return _EMPTY_PARENS_RE.sub("", text).strip()


def source_link(text: str) -> str | None:
    """The address a source points to, or None when it names no place on the web."""
    url = _URL_RE.search(text)
    repo = _REPO_RE.match(text + " ")
    if repo is not None and "." in repo.group(1).split("/")[0]:
        repo = None  # "rocm.docs.amd.com/..." is a web address, not owner/repo
    thread = _THREAD_RE.search(text) if repo is not None else None
    if repo is not None and thread is not None:
        kind = "issues" if thread.group(1) == "issue" else "pull"
        return f"https://github.com/{repo.group(1)}/{kind}/{thread.group(2)}"
    if url is not None:  # a page named beside a repository file is the better link
        return "https://" + url.group(1).rstrip(".:")
    if repo is not None:
        return f"https://github.com/{repo.group(1)}"
    return None


def source_html(text: str) -> str:
    """One source for a rich-text label: its head linked, the rest as plain text."""
    shown = shown_source(text)
    link = source_link(shown)
    cut = min((i for i in (shown.find(" ("), shown.find(": ")) if i > 0), default=len(shown))
    head, rest = shown[:cut], shown[cut:]
    if link is None:
        return html.escape(shown)
    return f'<a href="{html.escape(link)}">{html.escape(head)}</a>{html.escape(rest)}'


def sources_html(sources: list[str]) -> str:
    """ "Sources: " and every source linked, one after another ("" when there are none)."""
    if not sources:
        return ""
    return translate("sources", "Sources: {sources}").format(
        sources=" · ".join(source_html(s) for s in sources)
    )
