"""ROCm releases and the GPU targets each release supports, built from AMD's own files.

Pure parsers (text in, data out) for every upstream format the recipe uses, and ``build``,
which follows the recipe (``releases.yaml``) to make ``resources/compat.yaml`` and
``resources/gpus.yaml``. Nothing here touches the network; the sources are local copies
fetched by ``scripts/fetch_data_sources.py``.

Formats:
- ``versions.rst`` (ROCm/rocm-docs): the release history list-table -> (version, ISO date).
- ``gpus.yaml`` + ``os-support.yaml`` (+ the gpus schema) (ROCm/rocm-docs): AMD's product list.
- ``sysreq``: a system-requirements page (csv-table, list-table or Markdown pipe table) ->
  one row per product: name, gfx target, status (supported/deprecated/unsupported/runtime_only).
- ``compat_matrix``: the compatibility matrix (the ``.rst`` csv-table or the historical
  ``.csv``) -> per release column, the "GPU / LLVM target" cells with their footnote marks.
"""

from __future__ import annotations

import csv
import datetime as _dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from datagen import common
from datagen.common import DataError, Source, parsing, read_source

# libyaml's parser when PyYAML has it: the product lists parse many times faster.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
GFX_RE = re.compile(r"^gfx[0-9a-f]+$")
_FOOTREF_RE = re.compile(r"\[#([^\]]+)\]_")
_SUP_RE = re.compile(r":sup:`([^`]+)`")
_MD_LINK_RE = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_VERSION_ROW_RE = re.compile(r"^\s*\*\s+-\s+`?(\d+(?:\.\d+)+)\b")
_CELL_RE = re.compile(r"^\s*-\s+(.+?)\s*$")
# Operating systems as AMD names them in footnotes ("RHEL 9.6", "SLES 15 SP6", an optional
# "[6.8 HWE]" kernel note after the version).
_DISTRO_RE = re.compile(
    r"(?:Ubuntu \d+\.\d+(?:\.\d+)?|RHEL \d+(?:\.\d+)?|SLES \d+ SP\d+"
    r"|Oracle Linux(?: \d+(?:\.\d+)?)?|Debian \d+|Azure Linux \d+(?:\.\d+)?|Rocky Linux \d+)"
    r"(?: \[[^\]]+\])?"
)
FAMILIES = {"AMD Instinct": "Instinct", "AMD Radeon": "Radeon", "AMD Ryzen": "Ryzen"}
OSES = ("linux", "windows")
FORMATS = ("gpus_yaml", "sysreq", "compat_matrix")

# What each kind of source should be: the end of the error when one is not.
EXPECTED = {
    "versions": "ROCm's release history (rocm-docs docs/release/versions.rst): a list-table"
    " of '* - `X.Y.Z ...`' rows, each followed by a '- Month D, YYYY' date cell",
    "gpus_yaml": "AMD's product list (rocm-docs docs/data/gpus.yaml): a mapping of product"
    " family (AMD Instinct, AMD Radeon, AMD Ryzen) -> product name -> {gfx, arch, series, ...}",
    "os_support": "AMD's OS list (rocm-docs docs/data/os-support.yaml): product family ->"
    " product name -> {OS name: {abbr, versions: [...]}}",
    "schema": "the JSON schema of gpus.yaml (docs/data/schemas/gpus.schema.yaml): a mapping"
    " with properties (the families) and $defs.productEntry {required, properties}",
    "sysreq": "a system-requirements page with a GPU table (csv-table, list-table or Markdown)"
    " that has an 'LLVM target' column",
    "compat_matrix": "a compatibility matrix: a csv-table (or CSV file) whose header starts"
    " 'ROCm Version', with 'GPU / LLVM target' rows",
    "footnotes": "reStructuredText footnotes ('.. [#name] text') for the matrix's marks",
}


def gfx_key(gfx: str) -> tuple[int, int, int]:
    """Sort key for a gfx target: (major, minor, step) as the LLVM name encodes them."""
    digits = gfx[3:]
    if len(digits) >= 4:
        major, rest = digits[:-2], digits[-2:]
    else:
        major, rest = digits[:-2] or "0", digits[-2:]
    try:
        return (int(major), int(rest[0], 16), int(rest[1], 16))
    except (ValueError, IndexError):
        return (0, 0, 0)


def sort_gfx(targets: Iterable[str]) -> list[str]:
    """Distinct targets, newest first (gfx1201, gfx1200, ..., gfx90a, gfx908)."""
    return sorted(set(targets), key=gfx_key, reverse=True)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


# --------------------------------------------------------------------------------------------
# versions.rst
# --------------------------------------------------------------------------------------------


def _parse_date(text: str) -> str:
    cleaned = re.sub(r"\s+", " ", text.strip().rstrip("."))
    for fmt in ("%B %d, %Y", "%b %d, %Y"):
        try:
            return _dt.datetime.strptime(cleaned, fmt).date().isoformat()
        except ValueError:
            continue
    raise ValueError(f"unrecognised release date {text!r}")


def parse_versions_rst(text: str) -> list[tuple[str, str]]:
    """ROCm's release history: [(version, ISO date)], newest version first."""
    releases: dict[str, str] = {}
    pending: str | None = None
    for line in text.splitlines():
        row = _VERSION_ROW_RE.match(line)
        if row:
            pending = row.group(1)
            continue
        cell = _CELL_RE.match(line)
        if pending and cell:
            releases[pending] = _parse_date(cell.group(1))
            pending = None
    if not releases:
        raise ValueError("no releases found in the release history")
    return sorted(releases.items(), key=lambda item: version_key(item[0]), reverse=True)


# --------------------------------------------------------------------------------------------
# gpus.yaml + os-support.yaml
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Product:
    """One product of AMD's list, with the systems AMD lists it on."""

    name: str
    gfx: str
    family: str  # Instinct / Radeon / Ryzen
    arch: str
    series: str
    codename: str = ""
    igpu: str = ""
    linux: tuple[str, ...] = ()  # "Ubuntu 24.04.4 (HWE 6.17)"
    windows: bool = False
    wsl: bool = False

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "gfx": self.gfx,
            "family": self.family,
            "arch": self.arch,
            "series": self.series,
        }
        if self.codename:
            out["codename"] = self.codename
        if self.igpu:
            out["igpu"] = self.igpu
        out["linux"] = list(self.linux)
        out["windows"] = self.windows
        out["wsl"] = self.wsl
        return out


def _named(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("name", ""))
    return "" if value is None else str(value)


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` when it is a mapping (None counts as empty); ValueError naming ``what``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} is a {type(value).__name__}, not a mapping")
    return value


@dataclass(frozen=True)
class GpusSchema:
    """The parts of AMD's gpus.yaml schema the generator relies on."""

    families: frozenset[str]
    required: tuple[str, ...]
    allowed: frozenset[str]
    pattern: str


def read_gpus_schema(schema: Any) -> GpusSchema:
    """The checked parts of the schema document; ValueError when it lacks their shape."""
    doc = _mapping(schema, "the schema")
    families = _mapping(doc.get("properties"), "the schema's properties")
    entry = _mapping(_mapping(doc.get("$defs"), "$defs").get("productEntry"), "productEntry")
    required = entry.get("required") or []
    if not isinstance(required, list):
        raise ValueError("productEntry.required is not a list")
    allowed = _mapping(entry.get("properties"), "productEntry.properties")
    gfx = _mapping(allowed.get("gfx"), "productEntry.properties.gfx")
    pattern = str(gfx.get("pattern") or ".*")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"the gfx pattern {pattern!r} is not a regular expression: {exc}"
        ) from None
    return GpusSchema(
        families=frozenset(str(k) for k in families),
        required=tuple(str(r) for r in required),
        allowed=frozenset(str(k) for k in allowed),
        pattern=pattern,
    )


def check_gpus_schema(doc: Mapping[str, Any], schema: Mapping[str, Any] | GpusSchema) -> list[str]:
    """What in ``doc`` breaks the parts of AMD's schema the generator relies on."""
    rules = schema if isinstance(schema, GpusSchema) else read_gpus_schema(schema)
    problems: list[str] = []
    gfx_re = re.compile(rules.pattern)
    for key, products in doc.items():
        if str(key).startswith("_"):
            continue
        if key not in rules.families:
            problems.append(f"unknown family {key!r}")
            continue
        if not isinstance(products, Mapping):
            problems.append(f"{key}: not a mapping of products")
            continue
        for name, product in products.items():
            if not isinstance(product, Mapping):
                problems.append(f"{key}/{name}: not a mapping")
                continue
            for need in rules.required:
                if need not in product:
                    problems.append(f"{key}/{name}: missing {need}")
            extra = set(product) - rules.allowed if rules.allowed else set()
            if extra:
                problems.append(f"{key}/{name}: unexpected {sorted(extra)}")
            if "gfx" in product and not gfx_re.search(str(product["gfx"])):
                problems.append(
                    f"{key}/{name}: gfx {product['gfx']!r} does not match {rules.pattern}"
                )
    return problems


OsSupport = dict[str, tuple[tuple[str, ...], bool, bool]]


def _os_support(doc: Mapping[str, Any]) -> OsSupport:
    """Product name -> (Linux systems, Windows listed, WSL listed)."""
    out: OsSupport = {}
    for key, products in doc.items():
        if str(key).startswith("_") or not isinstance(products, Mapping):
            continue
        for name, systems in products.items():
            linux: list[str] = []
            windows = wsl = False
            for os_name, entry in _mapping(systems, f"{key}/{name}").items():
                if os_name == "Windows":
                    windows = True
                    continue
                if os_name == "WSL2":
                    wsl = True
                    continue
                entry = _mapping(entry, f"{key}/{name}/{os_name}")
                label = str(entry.get("abbr") or os_name)
                versions = entry.get("versions") or ()
                if not isinstance(versions, (list, tuple)):
                    raise ValueError(f"{key}/{name}/{os_name}: versions is not a list")
                for version in versions:
                    if isinstance(version, Mapping):
                        text = f"{label} {version.get('version', '')}".strip()
                        kernel = version.get("kernel")
                        linux.append(f"{text} ({kernel})" if kernel else text)
                    else:
                        linux.append(f"{label} {version}")
            out[str(name)] = (tuple(linux), windows, wsl)
    if not out:
        raise ValueError("no products found")
    return out


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)  # a safe loader (CSafeLoader or SafeLoader)


def load_gpus_doc(text: str) -> Mapping[str, Any]:
    """gpus.yaml (anchors resolved) as a mapping of family -> products."""
    return _mapping(_load(text), "the product list")


def load_os_support(text: str) -> OsSupport:
    """os-support.yaml as product name -> (Linux systems, Windows, WSL)."""
    return _os_support(_mapping(_load(text), "the OS list"))


def load_gpus_schema(text: str) -> GpusSchema:
    return read_gpus_schema(_load(text))


def gpus_products(doc: Mapping[str, Any], systems: OsSupport | None = None) -> list[Product]:
    """The products of a loaded gpus.yaml, in AMD's order; ValueError when it lists none."""
    systems = systems or {}
    products: list[Product] = []
    for key, entries in doc.items():
        if str(key).startswith("_") or not isinstance(entries, Mapping):
            continue
        family = FAMILIES.get(str(key), str(key).removeprefix("AMD ").strip())
        for name, entry in entries.items():
            entry = _mapping(entry, f"{key}/{name}")
            if not entry.get("gfx"):
                raise ValueError(f"{key}/{name} has no gfx")
            linux, windows, wsl = systems.get(str(name), ((), False, False))
            products.append(
                Product(
                    name=str(name),
                    gfx=str(entry["gfx"]),
                    family=family,
                    arch=_named(entry.get("arch")),
                    series=_named(entry.get("series")),
                    codename=str(entry.get("codename") or ""),
                    igpu=str(entry.get("igpu") or ""),
                    linux=linux,
                    windows=windows,
                    wsl=wsl,
                )
            )
    if not products:
        raise ValueError("no products found")
    return products


def parse_gpus_yaml(
    gpus_text: str, os_text: str | None = None, schema_text: str | None = None
) -> list[Product]:
    """AMD's product list, in AMD's order, with the systems from ``os-support.yaml``."""
    doc = load_gpus_doc(gpus_text)
    if schema_text is not None:
        problems = check_gpus_schema(doc, load_gpus_schema(schema_text))
        if problems:
            raise ValueError("gpus.yaml does not match its schema: " + "; ".join(problems))
    systems = load_os_support(os_text) if os_text is not None else {}
    return gpus_products(doc, systems)


def _distro_family(system: str) -> str:
    match = re.match(r"^(.*?) \d", system)
    return match.group(1) if match else system


def _short_version(system: str) -> str:
    """ "24.04" from "Ubuntu 24.04.4 (HWE 6.17)", with the kernel track when AMD names one
    other than the release's own: "24.04 (HWE 6.17 kernel)"."""
    match = re.match(r"^.*? (\d+(?:\.\d+)?)", system)
    short = match.group(1) if match else system
    track = re.search(r"\(((?:HWE|OEM) [\d.]+)\)", system)
    return f"{short} ({track.group(1)} kernel)" if track else short


def os_limits(
    products: Sequence[Product], families: Sequence[str] = ("Radeon", "Ryzen")
) -> dict[str, str]:
    """gfx -> sentence, for targets whose listed products run on only some distributions.

    Only products of ``families`` count (AMD lists Instinct parts on nearly every
    distribution; its Radeon and Ryzen lists are short). A target is limited when its
    products' distributions are a strict subset of every distribution in the data.
    """
    everywhere = {_distro_family(s) for p in products for s in p.linux}
    by_gfx: dict[str, list[Product]] = {}
    for product in products:
        if product.linux:
            by_gfx.setdefault(product.gfx, []).append(product)
    limits: dict[str, str] = {}
    for gfx, group in by_gfx.items():
        if any(p.family not in families for p in group):
            continue
        versions: dict[str, list[str]] = {}
        for product in group:
            for system in product.linux:
                short = _short_version(system)
                bucket = versions.setdefault(_distro_family(system), [])
                if short not in bucket:
                    bucket.append(short)
        if set(versions) >= everywhere:
            continue
        listed = "; ".join(f"{name} {', '.join(vs)}" for name, vs in versions.items())
        limits[gfx] = f"AMD supports {gfx} products on Linux only on {listed}."
    return limits


# --------------------------------------------------------------------------------------------
# system-requirements pages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SysreqRow:
    """One product row of a system-requirements GPU table."""

    name: str
    gfx: str
    status: str  # supported / deprecated / unsupported / runtime_only
    refs: tuple[str, ...] = ()


def _clean_cell(cell: str) -> str:
    cell = _MD_LINK_RE.sub(r"\1", cell).replace("™", "")
    return re.sub(r"\s+", " ", cell).strip()


def _csv_cells(line: str) -> list[str]:
    return next(csv.reader([line.strip()], skipinitialspace=True), [])


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every csv-table, list-table and Markdown pipe table: (header, rows)."""
    lines = text.splitlines()
    tables: list[tuple[list[str], list[list[str]]]] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith(".. csv-table::"):
            header: list[str] = []
            rows: list[list[str]] = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith(":")):
                opt = lines[i].strip()
                if opt.startswith(":header:"):
                    header = _csv_cells(opt[len(":header:") :])
                i += 1
            while i < len(lines) and lines[i].strip():
                rows.append(_csv_cells(lines[i]))
                i += 1
            tables.append((header, rows))
            continue
        if stripped.startswith(".. list-table::"):
            base = len(lines[i]) - len(lines[i].lstrip())
            all_rows: list[list[str]] = []
            i += 1
            while i < len(lines):
                cur = lines[i].strip()
                lead = len(lines[i]) - len(lines[i].lstrip())
                if cur and lead <= base:
                    break
                if cur.startswith("* -"):
                    all_rows.append([cur[3:].strip()])
                elif cur.startswith("- ") and all_rows:
                    all_rows[-1].append(cur[2:].strip())
                i += 1
            if all_rows:
                tables.append((all_rows[0], all_rows[1:]))
            continue
        if stripped.startswith("|") and i + 1 < len(lines):
            separator = lines[i + 1].strip()
            if separator.startswith("|") and set(separator) <= set("|:- "):
                header = [c for c in (s.strip() for s in stripped.strip("|").split("|"))]
                rows = []
                i += 2
                while i < len(lines) and lines[i].strip().startswith("|"):
                    rows.append([s.strip() for s in lines[i].strip().strip("|").split("|")])
                    i += 1
                tables.append((header, rows))
                continue
        i += 1
    return tables


def _mark(cell: str) -> str:
    if "✅" in cell:
        return "yes"
    if "⚠" in cell:
        return "deprecated"
    if "❌" in cell:
        return "no"
    return ""


def _refs(cell: str) -> tuple[str, ...]:
    return tuple(_FOOTREF_RE.findall(cell)) + tuple(_SUP_RE.findall(cell))


def parse_sysreq(text: str) -> list[SysreqRow]:
    """The GPU rows of a system-requirements page (Linux or Windows), in page order."""
    out: list[SysreqRow] = []
    for header, rows in _tables(text):
        names = [_clean_cell(h).lower() for h in header]
        if "llvm target" not in names:
            continue
        gfx_col = names.index("llvm target")
        support = names.index("support") if "support" in names else None
        runtime = names.index("runtime") if "runtime" in names else None
        sdk = names.index("hip sdk") if "hip sdk" in names else None
        for row in rows:
            if len(row) <= gfx_col:
                continue
            gfx = _clean_cell(row[gfx_col])
            if not GFX_RE.match(gfx):
                continue
            name = _clean_cell(row[0])
            if support is not None and support < len(row):
                mark = _mark(row[support])
                status = {"yes": "supported", "deprecated": "deprecated"}.get(mark, "unsupported")
                refs = _refs(row[support])
            elif runtime is not None and sdk is not None and sdk < len(row):
                run, lib = _mark(row[runtime]), _mark(row[sdk])
                if lib == "yes":
                    status = "supported"
                elif run == "yes":
                    status = "runtime_only"
                else:
                    status = "unsupported"
                refs = _refs(row[sdk]) + _refs(row[runtime])
            else:
                continue
            out.append(SysreqRow(name=name, gfx=gfx, status=status, refs=refs))
    if not out:
        raise ValueError("no GPU table with an LLVM target column found")
    return out


# --------------------------------------------------------------------------------------------
# compatibility matrix (.rst csv-table or the historical .csv)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatrixColumn:
    """One release column of the matrix: its label ("7.2.4/7.2.3") and its GPU targets."""

    label: str
    targets: dict[str, tuple[str, ...]] = field(default_factory=dict)  # gfx -> footnote marks

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(v.strip() for v in self.label.split("/") if v.strip())


def parse_footnotes(text: str) -> dict[str, str]:
    """``.. [#name] text`` footnotes (continuation lines joined), by name."""
    notes: dict[str, str] = {}
    current: str | None = None
    indent = 0
    for line in text.splitlines():
        match = re.match(r"^(\s*)\.\. \[#([^\]]+)\]\s*(.*)$", line)
        if match:
            current, indent = match.group(2), len(match.group(1))
            notes[current] = match.group(3).strip()
            continue
        if current is not None:
            lead = len(line) - len(line.lstrip())
            if line.strip() and lead > indent and not line.strip().startswith(".."):
                notes[current] = f"{notes[current]} {line.strip()}"
            else:
                current = None
    return notes


def _matrix_rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith(".. csv-table::"):
            j = i + 1
            header: list[str] = []
            while j < len(lines) and lines[j].strip().startswith(":"):
                opt = lines[j].strip()
                if opt.startswith(":header:"):
                    header = _csv_cells(opt[len(":header:") :])
                j += 1
            if not header or not header[0].strip().lower().startswith("rocm version"):
                continue
            body: list[list[str]] = [header]
            while j < len(lines) and not lines[j].strip():
                j += 1
            while j < len(lines) and lines[j].strip():
                body.append(_csv_cells(lines[j]))
                j += 1
            return body
    rows = [_csv_cells(line) for line in lines if line.strip()]
    if rows and rows[0] and rows[0][0].strip().lower().startswith("rocm version"):
        return rows
    raise ValueError("no 'ROCm Version' table found")


def parse_compat_matrix(text: str) -> list[MatrixColumn]:
    """The release columns of a compatibility matrix with their GPU / LLVM target cells."""
    rows = _matrix_rows(text)
    labels = [c.strip() for c in rows[0][1:]]
    targets: list[dict[str, tuple[str, ...]]] = [{} for _ in labels]
    in_gpus = False
    for row in rows[1:]:
        stub = row[0].strip() if row else ""
        cells = [c.strip() for c in row[1:]]
        if "LLVM target" in stub:
            in_gpus = True
        elif in_gpus and (stub or not any(cells) or cells[0].startswith("..")):
            break
        if not in_gpus:
            continue
        for index, cell in enumerate(cells[: len(labels)]):
            token = cell.split(" ")[0].strip() if cell else ""
            if GFX_RE.match(token):
                targets[index][token] = tuple(_FOOTREF_RE.findall(cell))
    if not any(targets):
        raise ValueError("no 'GPU / LLVM target' rows found")
    return [MatrixColumn(label=label, targets=t) for label, t in zip(labels, targets, strict=True)]


def footnote_limit(gfx: str, release: str, note: str) -> str | None:
    """Our sentence for a matrix footnote that restricts a target to some systems."""
    systems = list(dict.fromkeys(m.group(0) for m in _DISTRO_RE.finditer(note)))
    if not systems:
        return None
    listed = ", ".join(systems)
    if "except" in note.lower():
        return (
            f"AMD's compatibility matrix excludes some systems for {gfx} in ROCm {release}:"
            f" {listed}."
        )
    return (
        f"AMD's compatibility matrix names only some systems for {gfx} in ROCm {release}"
        f" (per product): {listed}."
    )


# --------------------------------------------------------------------------------------------
# the recipe
# --------------------------------------------------------------------------------------------


@dataclass
class Part:
    """What one recipe entry contributes to a row."""

    supported: set[str] = field(default_factory=set)
    deprecated: set[str] = field(default_factory=set)
    runtime_only: set[str] = field(default_factory=set)
    limited: dict[str, str] = field(default_factory=dict)
    products: dict[str, list[str]] = field(default_factory=dict)

    def merge(self, other: Part, use: Sequence[str]) -> None:
        if "supported" in use:
            self.supported |= other.supported
        if "deprecated" in use:
            self.deprecated |= other.deprecated
        if "runtime_only" in use:
            self.runtime_only |= other.runtime_only
        if "limited" in use:
            self.limited.update(other.limited)
        if "products" in use:
            for gfx, names in other.products.items():
                bucket = self.products.setdefault(gfx, [])
                bucket.extend(n for n in names if n not in bucket)


ALL_FIELDS = ("supported", "deprecated", "runtime_only", "limited", "products")


class Sources:
    """The pinned sources by key, read from ``sources_dir`` once each, and parsed once each.

    Every parse runs under ``common.parsing``: bad input becomes one DataError naming the
    source key, its local file and what that file should have been."""

    def __init__(self, pins: Mapping[str, Source], sources_dir: Path) -> None:
        self.pins = dict(pins)
        self.dir = sources_dir
        self._text: dict[str, str] = {}
        self._parsed: dict[tuple[str, str], Any] = {}
        self._products: dict[tuple[str, str | None, str | None], list[Product]] = {}
        self.used: list[str] = []

    def where(self, key: str) -> str:
        """ "source KEY (FILE)": how an error names a source."""
        pin = self.pins.get(key)
        return f"source {key} ({self.dir / pin.file})" if pin else f"source {key}"

    def text(self, key: str) -> str:
        if key not in self.pins:
            raise DataError(f"the recipe names source {key!r}, which is not pinned")
        if key not in self._text:
            self._text[key] = read_source(self.dir, self.pins[key])
        if key not in self.used:
            self.used.append(key)
        return self._text[key]

    def parsed(self, key: str, kind: str, parser: Any) -> Any:
        """``parser(text)`` of one source, once per (key, kind); bad input -> DataError
        that says what a ``kind`` source should be (EXPECTED)."""
        text = self.text(key)
        if (key, kind) not in self._parsed:
            with parsing(self.where(key), EXPECTED[kind]):
                self._parsed[(key, kind)] = parser(text)
        return self._parsed[(key, kind)]

    def products(self, source: str, os_support: str | None, schema: str | None) -> list[Product]:
        """AMD's product list from these sources (``parse_gpus_yaml``), parsed once."""
        for key in (source, os_support, schema):
            if key:
                self.text(key)  # read (and cite) in this order, before anything is parsed
        cache_key = (source, os_support, schema)
        if cache_key not in self._products:
            doc = self.parsed(source, "gpus_yaml", load_gpus_doc)
            if schema:
                rules = self.parsed(schema, "schema", load_gpus_schema)
                problems = check_gpus_schema(doc, rules)
                if problems:
                    raise DataError(
                        f"{self.where(source)} does not match its schema ({schema}): "
                        + "; ".join(problems)
                    )
            systems = self.parsed(os_support, "os_support", load_os_support) if os_support else {}
            with parsing(self.where(source), EXPECTED["gpus_yaml"]):
                self._products[cache_key] = gpus_products(doc, systems)
        return self._products[cache_key]


def _gpus_part(entry: Mapping[str, Any], sources: Sources, os_name: str) -> Part:
    products = sources.products(entry["source"], entry.get("os_support"), entry.get("schema"))
    excluded = set(entry.get("exclude_products") or ())
    chosen = [p for p in products if p.name not in excluded]
    part = Part()
    for product in chosen:
        listed = product.windows if os_name == "windows" else bool(product.linux)
        if not listed:
            continue
        part.supported.add(product.gfx)
        part.products.setdefault(product.gfx, []).append(product.name)
    if os_name == "linux":
        families = entry.get("limited_families", ["Radeon", "Ryzen"])
        limits = os_limits([p for p in chosen if p.linux], families)
        part.limited = {g: s for g, s in limits.items() if g in part.supported}
    return part


def _sysreq_part(entry: Mapping[str, Any], sources: Sources) -> Part:
    part = Part()
    for row in sources.parsed(entry["source"], "sysreq", parse_sysreq):
        if row.status == "supported":
            part.supported.add(row.gfx)
        elif row.status == "deprecated":
            part.deprecated.add(row.gfx)
        elif row.status == "runtime_only":
            part.runtime_only.add(row.gfx)
        else:
            continue
        part.products.setdefault(row.gfx, []).append(row.name)
    # A target with a fully supported product is not "runtime only" or "deprecated".
    part.runtime_only -= part.supported
    part.deprecated -= part.supported
    return part


def _matrix_part(entry: Mapping[str, Any], sources: Sources) -> Part:
    parsed = sources.parsed(entry["source"], "compat_matrix", parse_compat_matrix)
    columns = {c.label: c for c in parsed}
    wanted = entry.get("columns") or [entry["column"]]
    missing = [w for w in wanted if w not in columns]
    if missing:
        raise ValueError(f"{entry['source']}: no column {missing} (have {sorted(columns)})")
    first = columns[wanted[0]]
    for other in wanted[1:]:
        if set(columns[other].targets) != set(first.targets):
            raise ValueError(
                f"{entry['source']}: columns {wanted[0]} and {other} list different targets"
            )
    notes_key = entry.get("footnotes") or entry["source"]
    notes = sources.parsed(notes_key, "footnotes", parse_footnotes)
    part = Part(supported=set(first.targets))
    release = first.versions[-1] if first.versions else first.label
    for gfx, refs in first.targets.items():
        unknown = [ref for ref in refs if ref not in notes]
        if unknown:  # a cut or wrong footnotes file would silently drop `limited`
            raise DataError(
                f"{sources.where(notes_key)}: no footnote {', '.join(unknown)} (the mark of "
                f"{gfx} in column {first.label} of {entry['source']}); expected "
                + EXPECTED["footnotes"]
            )
        for ref in refs:
            sentence = footnote_limit(gfx, release, notes.get(ref, ""))
            if sentence:
                part.limited[gfx] = sentence
                break
    return part


def _transcribed_part(block: Mapping[str, Any]) -> Part:
    return Part(
        supported=set(block.get("supported") or ()),
        deprecated=set(block.get("deprecated") or ()),
        runtime_only=set(block.get("runtime_only") or ()),
        limited={str(k): str(v) for k, v in (block.get("limited") or {}).items()},
        products={str(k): [str(n) for n in v] for k, v in (block.get("products") or {}).items()},
    )


def build_row(recipe_row: Mapping[str, Any], sources: Sources, os_name: str) -> dict[str, Any]:
    """One compat.yaml row from its recipe entry."""
    part = Part()
    src: list[str] = []
    for entry in recipe_row.get("gpus") or ():
        fmt = entry["format"]
        if fmt == "gpus_yaml":
            got = _gpus_part(entry, sources, os_name)
            keys = [entry["source"], entry.get("os_support"), entry.get("schema")]
        elif fmt == "sysreq":
            got = _sysreq_part(entry, sources)
            keys = [entry["source"]]
        elif fmt == "compat_matrix":
            got = _matrix_part(entry, sources)
            keys = [entry["source"], entry.get("footnotes")]
        else:
            raise ValueError(f"unknown source format {fmt!r}")
        part.merge(got, entry.get("use") or ALL_FIELDS)
        src.extend(k for k in keys if k and k != entry.get("schema"))
    transcribed = recipe_row.get("transcribed")
    if transcribed:
        part.merge(_transcribed_part(transcribed), ALL_FIELDS)
        src.extend(transcribed.get("src") or ())
    src.extend(recipe_row.get("also_src") or ())
    if not part.supported:
        raise ValueError("no supported targets")
    bad = [g for g in part.limited if g not in part.supported]
    if bad:
        raise ValueError(f"limited {bad} not supported")
    status = recipe_row.get("status") or ("transcribed" if transcribed else "official")
    row: dict[str, Any] = {"series": str(recipe_row["series"])}
    if recipe_row.get("from"):
        row["from"] = str(recipe_row["from"])
    row["supported"] = sort_gfx(part.supported)
    deprecated = part.deprecated - part.supported
    if deprecated:
        row["deprecated"] = sort_gfx(deprecated)
    runtime_only = part.runtime_only - part.supported
    if os_name == "windows" and runtime_only:
        row["runtime_only"] = sort_gfx(runtime_only)
    if part.limited:
        row["limited"] = {g: part.limited[g] for g in sort_gfx(part.limited)}
    listed = part.supported | deprecated | (runtime_only if os_name == "windows" else set())
    products = {
        g: part.products[g] for g in sort_gfx(part.products) if part.products[g] and g in listed
    }
    if products:
        row["products"] = products
    row["src"] = list(dict.fromkeys(src))
    row["status"] = status
    return row


def _row_start(row: Mapping[str, Any]) -> str:
    return str(row.get("from") or f"{row['series']}.0")


def latest_known(rows: Sequence[Mapping[str, Any]], releases: Sequence[tuple[str, str]]) -> str:
    """The newest release that a row covers (its series has a row starting at or before it)."""
    best: str | None = None
    for version, _date in releases:
        series = ".".join(version.split(".")[:2])
        covered = any(
            str(r["series"]) == series and version_key(_row_start(r)) <= version_key(version)
            for r in rows
        )
        if covered and (best is None or version_key(version) > version_key(best)):
            best = version
    if best is None:
        raise ValueError("no release is covered by any row")
    return best


def describe(source: Source) -> str:
    """The one-line ``sources:`` text for a pinned source."""
    where = " ".join(p for p in (source.repo, source.path) if p)
    if source.commit:
        where = f"{where} @{source.commit[:12]}".strip()
    details = ", ".join(p for p in (where, source.date) if p)
    return f"{source.what} ({details}): {source.url}" if details else f"{source.what}: {source.url}"


@dataclass
class Built:
    """What ``build`` makes: the two documents and the pinned sources they used."""

    compat: dict[str, Any]
    gpus: dict[str, Any]
    sources: list[Source]
    data_as_of: str


_ROW_KEYS = {"series", "from", "gpus", "transcribed", "also_src", "status", "note"}
_ENTRY_KEYS = {
    "source",
    "format",
    "use",
    "column",
    "columns",
    "footnotes",
    "os_support",
    "schema",
    "exclude_products",
    "limited_families",
}
_TRANSCRIBED_KEYS = {"supported", "deprecated", "runtime_only", "limited", "products", "src"}


def _strs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_entry(entry: Any, at: str) -> list[str]:
    if not isinstance(entry, Mapping):
        return [f"{at}: not a mapping of source, format, ..."]
    problems = [f"{at}: unknown key {k!r}" for k in entry if k not in _ENTRY_KEYS]
    if not isinstance(entry.get("source"), str):
        problems.append(f"{at}: needs source (a pinned source key)")
    fmt = entry.get("format")
    if fmt not in FORMATS:
        problems.append(f"{at}: format is one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt == "compat_matrix":
        columns = entry.get("columns")
        if not isinstance(entry.get("column"), str) and not (_strs(columns) and columns):
            problems.append(f"{at}: a compat_matrix entry needs column or columns (strings)")
    for name in ("footnotes", "os_support", "schema"):
        if name in entry and not isinstance(entry[name], str):
            problems.append(f"{at}: {name} is a source key")
    for name in ("use", "exclude_products", "limited_families"):
        if name in entry and not _strs(entry[name]):
            problems.append(f"{at}: {name} is a list of strings")
    bad_use = [u for u in entry.get("use") or () if u not in ALL_FIELDS]
    if bad_use:
        problems.append(f"{at}: use names unknown fields {bad_use} ({', '.join(ALL_FIELDS)})")
    return problems


def _check_row(row: Any, at: str) -> list[str]:
    if not isinstance(row, Mapping):
        return [f"{at}: not a mapping of series, gpus, ..."]
    problems = [f"{at}: unknown key {k!r}" for k in row if k not in _ROW_KEYS]
    for name in ("series", "from", "status", "note"):
        if name in row and not isinstance(row[name], str):
            problems.append(f"{at}: {name} must be a quoted string, not {row[name]!r}")
    if "series" not in row:
        problems.append(f"{at}: needs series")
    gpus = row.get("gpus")
    if gpus is not None and not isinstance(gpus, list):
        problems.append(f"{at}: gpus is a list of entries")
    elif gpus:
        for index, entry in enumerate(gpus):
            problems += _check_entry(entry, f"{at} gpus[{index}]")
    transcribed = row.get("transcribed")
    if transcribed is not None:
        if not isinstance(transcribed, Mapping):
            problems.append(f"{at}: transcribed is a mapping")
        else:
            problems += [
                f"{at}: transcribed has unknown key {k!r}"
                for k in transcribed
                if k not in _TRANSCRIBED_KEYS
            ]
            for name in ("supported", "deprecated", "runtime_only", "src"):
                if name in transcribed and not _strs(transcribed[name]):
                    problems.append(f"{at}: transcribed.{name} is a list of strings")
            for name in ("limited", "products"):
                if name in transcribed and not isinstance(transcribed[name], Mapping):
                    problems.append(f"{at}: transcribed.{name} is a mapping by gfx target")
    if not gpus and not transcribed:
        problems.append(f"{at}: needs gpus or transcribed")
    if "also_src" in row and not _strs(row["also_src"]):
        problems.append(f"{at}: also_src is a list of source keys")
    return problems


def check_recipe(recipe: Any) -> list[str]:
    """What in a recipe (releases.yaml) is not of the shape ``build`` reads; [] when fine."""
    if not isinstance(recipe, Mapping):
        return [f"the recipe is a {type(recipe).__name__}, not a mapping of releases, rows, ..."]
    problems: list[str] = []
    releases = recipe.get("releases")
    if not isinstance(releases, Mapping) or not isinstance(releases.get("source"), str):
        problems.append("releases: needs {source: <the versions.rst pin>}")
    products = recipe.get("products")
    if not isinstance(products, Mapping) or not all(
        isinstance(products.get(k), str) for k in ("source", "os_support", "schema")
    ):
        problems.append("products: needs {source, os_support, schema} (pin keys)")
    citations = recipe.get("citations")
    if citations is not None and not isinstance(citations, Mapping):
        problems.append("citations: a mapping of key -> citation text")
    if not recipe.get("linux") and not recipe.get("windows"):
        problems.append("no linux or windows rows")
    for os_name in OSES:
        rows = recipe.get(os_name)
        if rows is None:
            continue
        if not isinstance(rows, list):
            problems.append(f"{os_name}: a list of rows")
            continue
        for index, row in enumerate(rows):
            series = row.get("series") if isinstance(row, Mapping) else None
            problems += _check_row(row, f"{os_name}[{index}] ({series or '?'})")
    return problems


def _check_rows_released(
    recipe: Mapping[str, Any], releases: Sequence[tuple[str, str]], where: str
) -> None:
    """Every row's series has a release in the history, and its ``from`` is one: a cut or
    stale versions.rst fails here instead of quietly shortening ``releases``."""
    known = {version for version, _date in releases}
    series_known = {".".join(version.split(".")[:2]) for version in known}
    for os_name in OSES:
        for row in recipe.get(os_name) or ():
            series, start = str(row["series"]), row.get("from")
            missing = start if start and start not in known else None
            if series not in series_known:
                missing = f"any {series}.x"
            if missing:
                raise DataError(
                    f"{where}: no release {missing}, which the recipe's {os_name} {series} "
                    f"row covers; expected {EXPECTED['versions']}"
                )


def build(
    recipe: Mapping[str, Any],
    pins: Mapping[str, Source],
    sources_dir: Path,
    generated: Any,
) -> Built:
    """compat.yaml and gpus.yaml from the recipe. ``generated(list[Source])`` makes the
    ``generated:`` block (``common.generated_block`` with the date fixed by the caller)."""
    problems = check_recipe(recipe)
    if problems:
        raise DataError("the recipe: " + "; ".join(problems))
    sources = Sources(pins, sources_dir)
    versions_key = recipe["releases"]["source"]
    releases = sources.parsed(versions_key, "versions", parse_versions_rst)
    _check_rows_released(recipe, releases, sources.where(versions_key))
    data_as_of = max(date for _v, date in releases)
    citations = {str(k): str(v) for k, v in (recipe.get("citations") or {}).items()}
    rows: dict[str, list[dict[str, Any]]] = {}
    for os_name in OSES:
        built = []
        for recipe_row in recipe.get(os_name) or ():
            try:
                built.append(build_row(recipe_row, sources, os_name))
            except DataError:
                raise
            except ValueError as exc:
                raise DataError(
                    f"the recipe's {os_name} {recipe_row['series']} row: {exc}"
                ) from exc
        rows[os_name] = sorted(built, key=lambda r: version_key(_row_start(r)))
    used_keys: list[str] = []
    for os_name in OSES:
        for row in rows[os_name]:
            for key in row["src"]:
                if key not in pins and key not in citations:
                    raise DataError(f"source key {key!r} is neither pinned nor cited")
                if key not in used_keys:
                    used_keys.append(key)
    products_spec = recipe["products"]
    products = sources.products(
        products_spec["source"], products_spec["os_support"], products_spec["schema"]
    )
    pinned_used = [pins[k] for k in sources.used]
    compat: dict[str, Any] = {
        "schema": 2,
        "generated": generated(pinned_used),
        "data_as_of": data_as_of,
        "releases": [{"version": v, "date": d} for v, d in releases],
        "latest_known": {os_name: latest_known(rows[os_name], releases) for os_name in OSES},
        "sources": {
            k: (describe(pins[k]) if k in pins else citations[k]) for k in sorted(used_keys)
        },
        "linux": rows["linux"],
        "windows": rows["windows"],
    }
    gpu_sources = [pins[products_spec[k]] for k in ("source", "os_support", "schema")]
    gpus: dict[str, Any] = {
        "schema": 1,
        "generated": generated(gpu_sources),
        "data_as_of": pins[products_spec["source"]].date or data_as_of,
        "products": [p.record() for p in products],
    }
    return Built(compat=compat, gpus=gpus, sources=pinned_used, data_as_of=data_as_of)


def load_pins_file(path: Path) -> dict[str, Source]:
    """Pins from any file, checked (``common.load_pins_file``)."""
    return common.load_pins_file(path)
