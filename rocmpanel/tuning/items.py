"""The Tuning tab's answered tuning items (resources/tuning_items.yaml), Qt-free.

Every tuning snippet the seed guide hands out has an item saying what it really does on
ROCm and which preset setting does what the user wanted (or why nothing does); settings
the guide never mentions but ROCm users need are items too. The list is searchable and
the preset editor asks :func:`item_for_setting` for a preset item's "what is this?".

The file is validated on load: an unknown kind or verdict, a guide item without what the
guide says, missing sources, or a setting naming a variable the environment catalogue
does not know (or a torch key outside TORCH_SETTINGS) raise :class:`TuningItemsError`
naming the entry and the field.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.resources import read_resource
from rocmpanel.envvars.catalogue import Catalogue, load_catalogue
from rocmpanel.jobs.presets import ARCHS, TORCH_SETTINGS

RESOURCE = "tuning_items.yaml"
KINDS: tuple[str, ...] = ("guide", "knob")
VERDICTS: tuple[str, ...] = ("use", "not_useful", "caution")
SETTING_KINDS: tuple[str, ...] = ("env", "torch")
PLATFORMS: tuple[str, ...] = ("linux", "windows")

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
#: A source written as a bare word is a key of the env catalogue's ``sources``.
_SOURCE_KEY_RE = re.compile(r"^[a-z0-9_]+$")
_FIELDS = frozenset(
    {
        "id",
        "title",
        "kind",
        "snippet",
        "guide_says",
        "verdict",
        "what_it_does",
        "instead",
        "setting",
        "related_env",
        "archs",
        "platforms",
        "torch",
        "sources",
        "keywords",
    }
)


class TuningItemsError(PanelError):
    """The item list does not fit its schema: names the file, the entry and the field."""

    def __init__(self, file: str, item_id: str, field: str, problem: str) -> None:
        self.file = file
        self.item_id = item_id
        self.field = field
        self.problem = problem
        super().__init__(f"{file}: item {item_id}: {field}: {problem}")


@dataclass(frozen=True)
class TuningItem:
    """One answered snippet or knob (fields as in the header of resources/tuning_items.yaml)."""

    id: str
    title: str
    kind: str
    verdict: str
    what_it_does: str
    instead: str
    sources: tuple[str, ...]
    snippet: str = ""
    guide_says: str = ""
    setting: tuple[str, str] | None = None  # ("env", NAME) or ("torch", KEY)
    related_env: tuple[str, ...] = ()
    archs: tuple[str, ...] = ("any",)
    platforms: tuple[str, ...] = PLATFORMS
    torch: str = ""
    keywords: tuple[str, ...] = ()

    def search_text(self) -> str:
        """The text :func:`search` looks in, lower-cased."""
        parts = [self.title, self.snippet, self.guide_says, self.what_it_does, *self.keywords]
        return "\n".join(parts).casefold()

    def prose(self) -> tuple[str, ...]:
        """The sentences rocmpanel itself says (not the guide's snippet or claim)."""
        return (self.title, self.what_it_does, self.instead)


def _text(raw: Mapping[str, Any], key: str, file: str, ident: str, *, required: bool) -> str:
    value = raw.get(key)
    if value is None:
        if required:
            raise TuningItemsError(file, ident, key, "missing")
        return ""
    if not isinstance(value, str):
        raise TuningItemsError(file, ident, key, "must be text")
    text = value.strip()
    if required and not text:
        raise TuningItemsError(file, ident, key, "empty")
    return text


def _words(raw: Mapping[str, Any], key: str, file: str, ident: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise TuningItemsError(file, ident, key, "must be a list of non-empty texts")
    return tuple(v.strip() for v in value)


def _choice(raw: Mapping[str, Any], key: str, choices: Sequence[str], file: str, ident: str) -> str:
    value = _text(raw, key, file, ident, required=True)
    if value not in choices:
        raise TuningItemsError(file, ident, key, f"{value!r} is not one of {', '.join(choices)}")
    return value


def _env_known(name: str, catalogue: Catalogue, file: str, ident: str, field: str) -> None:
    """A variable the catalogue knows, or the name of a patterned entry (such as
    ``HSA_OVERRIDE_GFX_VERSION_<node>``)."""
    entries = {info.name for info in catalogue.variables}
    if catalogue.lookup(name) is None and name not in entries:
        raise TuningItemsError(
            file, ident, field, f"{name} is not in the environment catalogue (env_catalogue.yaml)"
        )


def _setting(
    raw: Mapping[str, Any], catalogue: Catalogue, file: str, ident: str
) -> tuple[str, str] | None:
    value = raw.get("setting")
    if value is None:
        return None
    if not isinstance(value, Mapping) or len(value) != 1:
        raise TuningItemsError(file, ident, "setting", "must be {env: NAME} or {torch: KEY}")
    ((kind, key),) = value.items()
    if kind not in SETTING_KINDS or not isinstance(key, str) or not key:
        raise TuningItemsError(file, ident, "setting", "must be {env: NAME} or {torch: KEY}")
    if kind == "env":
        _env_known(key, catalogue, file, ident, "setting")
    elif key not in TORCH_SETTINGS:
        raise TuningItemsError(
            file,
            ident,
            "setting",
            f"{key!r} is not a torch setting (known: {', '.join(TORCH_SETTINGS)})",
        )
    return (str(kind), key)


def _sources(
    raw: Mapping[str, Any], catalogue: Catalogue, file: str, ident: str
) -> tuple[str, ...]:
    if not raw.get("sources"):
        raise TuningItemsError(file, ident, "sources", "missing: every item names its sources")
    sources = _words(raw, "sources", file, ident)
    for source in sources:
        if _SOURCE_KEY_RE.match(source) and source not in catalogue.sources:
            raise TuningItemsError(
                file, ident, "sources", f"{source!r} is not a source key of env_catalogue.yaml"
            )
    return sources


def _item(raw: Any, index: int, catalogue: Catalogue, file: str) -> TuningItem:
    if not isinstance(raw, Mapping):
        raise TuningItemsError(file, f"#{index + 1}", "entry", "must be a mapping")
    ident = raw.get("id")
    if not isinstance(ident, str) or not _ID_RE.match(ident):
        raise TuningItemsError(
            file, f"#{index + 1}", "id", "missing or not a slug ([a-z0-9-], at most 48)"
        )
    unknown = sorted(set(map(str, raw)) - _FIELDS)
    if unknown:
        raise TuningItemsError(file, ident, unknown[0], "unknown field")
    kind = _choice(raw, "kind", KINDS, file, ident)
    guide_says = _text(raw, "guide_says", file, ident, required=kind == "guide")
    snippet = _text(raw, "snippet", file, ident, required=kind == "guide")
    archs = _words(raw, "archs", file, ident) if "archs" in raw else ("any",)
    for arch in archs:
        if arch not in ARCHS:
            raise TuningItemsError(
                file, ident, "archs", f"{arch!r} is not one of {', '.join(ARCHS)}"
            )
    platforms = _words(raw, "platforms", file, ident) if "platforms" in raw else PLATFORMS
    if not platforms or set(platforms) - set(PLATFORMS):
        raise TuningItemsError(file, ident, "platforms", "must list linux and/or windows")
    related = _words(raw, "related_env", file, ident)
    for name in related:
        _env_known(name, catalogue, file, ident, "related_env")
    verdict = _choice(raw, "verdict", VERDICTS, file, ident)
    setting = _setting(raw, catalogue, file, ident)
    if verdict == "use" and setting is None:
        raise TuningItemsError(file, ident, "setting", "verdict 'use' needs a preset setting")
    return TuningItem(
        id=ident,
        title=_text(raw, "title", file, ident, required=True),
        kind=kind,
        verdict=verdict,
        what_it_does=_text(raw, "what_it_does", file, ident, required=True),
        instead=_text(raw, "instead", file, ident, required=True),
        sources=_sources(raw, catalogue, file, ident),
        snippet=snippet,
        guide_says=guide_says,
        setting=setting,
        related_env=related,
        archs=archs,
        platforms=platforms,
        torch=_text(raw, "torch", file, ident, required=False),
        keywords=_words(raw, "keywords", file, ident),
    )


def parse_items(
    text: str, file: str = RESOURCE, catalogue: Catalogue | None = None
) -> tuple[TuningItem, ...]:
    """Parse and validate an item list; TuningItemsError names the entry and field."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TuningItemsError(file, "-", "yaml", f"not readable YAML ({exc})") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("items"), list):
        raise TuningItemsError(file, "-", "items", "the file needs a list under 'items'")
    catalogue = catalogue or load_catalogue()
    items: list[TuningItem] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["items"]):
        item = _item(raw, index, catalogue, file)
        if item.id in seen:
            raise TuningItemsError(file, item.id, "id", "used by an earlier item")
        seen.add(item.id)
        items.append(item)
    return tuple(items)


@functools.lru_cache(maxsize=1)
def load_items() -> tuple[TuningItem, ...]:
    """The shipped items (read and validated once); a bad file is a bug: raises."""
    try:
        text = read_resource(RESOURCE)
    except OSError as exc:
        raise PanelError(
            translate("items", "The list of tuning items is missing."), str(exc)
        ) from exc
    return parse_items(text, RESOURCE)


def search(items: Sequence[TuningItem], text: str) -> list[TuningItem]:
    """The items whose title, snippet, guide claim, explanation or keywords hold every word
    of ``text`` (case-insensitive; empty text: all), in list order."""
    words = text.casefold().split()
    return [item for item in items if all(w in item.search_text() for w in words)]


def item_for_setting(
    kind: str, key: str, items: Sequence[TuningItem] | None = None
) -> TuningItem | None:
    """The item explaining a preset item (``kind`` "env" or "torch", ``key`` its variable
    or TORCH_SETTINGS key): the first whose setting it is, else the first that lists the
    variable (or its patterned catalogue entry) in related_env; None when no item explains
    it."""
    items = load_items() if items is None else items
    for item in items:
        if item.setting == (kind, key):
            return item
    if kind != "env":
        return None
    # A name of a patterned catalogue entry (HSA_OVERRIDE_GFX_VERSION_1) is explained by
    # the item that lists the entry (HSA_OVERRIDE_GFX_VERSION_<node>).
    info = load_catalogue().lookup(key)
    names = {key, info.name} if info is not None else {key}
    for item in items:
        if names & set(item.related_env):
            return item
    return None
