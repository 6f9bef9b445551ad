"""The compatibility data generator: parsers on small samples of every upstream format,
generate_data.py end to end on a sample recipe, the fetch step, and facts of the shipped
resources/compat.yaml, gpus.yaml and docs/support-table.md (each naming its source)."""

from __future__ import annotations

import functools
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
SAMPLES = Path(__file__).resolve().parent / "samples" / "compat"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import fetch_data_sources  # noqa: E402
import generate_data  # noqa: E402
from datagen import common, compat, table  # noqa: E402


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _shipped_text(name: str) -> str:
    return (ROOT / "resources" / name).read_text(encoding="utf-8")


def shipped(name: str) -> dict[str, Any]:
    """A shipped resource file, parsed (fresh each call: tests may not share mutations)."""
    doc: dict[str, Any] = yaml.load(_shipped_text(name), Loader=_LOADER)
    return doc


def row(doc: dict[str, Any], os_name: str, series: str, start: str | None = None) -> dict[str, Any]:
    for entry in doc[os_name]:
        if entry["series"] == series and entry.get("from") == start:
            found: dict[str, Any] = entry
            return found
    raise AssertionError(f"no {os_name} row {series} from {start}")


# --------------------------------------------------------------------------------------------
# parsers
# --------------------------------------------------------------------------------------------


def test_versions_rst_gives_every_release_with_an_iso_date_newest_version_first() -> None:
    releases = compat.parse_versions_rst(sample("versions.rst"))
    assert releases[0] == ("10.1.0", "2026-10-05")
    assert ("7.14.1", "2026-09-02") in releases
    assert ("6.1.0", "2024-04-16") in releases  # "Apr 16, 2024": the short month form
    versions = [v for v, _d in releases]
    assert versions == sorted(versions, key=compat.version_key, reverse=True)
    with pytest.raises(ValueError):
        compat.parse_versions_rst("no table here")


def test_gpus_yaml_resolves_anchors_and_joins_the_os_list() -> None:
    products = {
        p.name: p
        for p in compat.parse_gpus_yaml(
            sample("gpus.yaml"), sample("os-support.yaml"), sample("gpus.schema.yaml")
        )
    }
    xtx = products["AMD Radeon RX 7900 XTX"]
    assert (xtx.gfx, xtx.family, xtx.arch, xtx.series) == (
        "gfx1100",
        "Radeon",
        "RDNA 3",
        "AMD Radeon RX 7000 Series",
    )
    assert xtx.linux == ("Ubuntu 24.04.4 (HWE 6.17)", "RHEL 9.8 (5.14.0-687)")  # abbr via <<
    assert xtx.windows and not xtx.wsl
    assert products["AMD Radeon RX 9070 XT"].wsl
    halo = products["AMD Ryzen AI Max+ 395"]
    assert (halo.igpu, halo.codename, halo.family) == ("Radeon 8060S", "Strix Halo", "Ryzen")
    assert not products["AMD Ryzen 7 260"].windows
    assert "codename" not in products["AMD Instinct MI300X"].record()


def test_gpus_yaml_that_breaks_the_schema_is_refused() -> None:
    broken = sample("gpus.yaml").replace("    gfx: gfx942\n", "    gfx: GFX942\n")
    with pytest.raises(ValueError, match="does not match"):
        compat.parse_gpus_yaml(broken, None, sample("gpus.schema.yaml"))
    extra = sample("gpus.yaml").replace("    codename: Strix Halo\n", "    cores: 16\n")
    with pytest.raises(ValueError, match="unexpected"):
        compat.parse_gpus_yaml(extra, None, sample("gpus.schema.yaml"))


def test_os_limits_flags_radeon_and_ryzen_targets_listed_on_few_distributions() -> None:
    products = compat.parse_gpus_yaml(sample("gpus.yaml"), sample("os-support.yaml"))
    limits = compat.os_limits(products)
    assert "gfx942" not in limits  # Instinct: never judged by this rule
    assert (
        limits["gfx1100"]
        == "AMD supports gfx1100 products on Linux only on Ubuntu 24.04 (HWE 6.17 kernel); "
        "RHEL 9.8."
    )
    assert "Ubuntu 26.04" in limits["gfx1151"] and "RHEL" not in limits["gfx1151"]


def test_sysreq_csv_table_reads_status_and_footnote_marks() -> None:
    rows = compat.parse_sysreq(sample("sysreq-linux.rst"))
    by_name = {r.name: r for r in rows}
    assert by_name["AMD Instinct MI300X"].status == "supported"
    assert by_name["AMD Instinct MI300X"].refs == ("1",)
    assert by_name["AMD Instinct MI50"].status == "deprecated"
    assert by_name["AMD Instinct MI25"].status == "unsupported"
    assert by_name["AMD Radeon PRO V710"].refs == ("rd-v710",)
    assert "AMD Radeon PRO W7900" in by_name  # the ™ is dropped
    assert all(r.gfx.startswith("gfx") for r in rows)  # the OS table is not a GPU table


def test_sysreq_windows_tables_tell_sdk_from_runtime_only() -> None:
    csv_rows = {r.gfx: r.status for r in compat.parse_sysreq(sample("sysreq-windows.rst"))}
    assert csv_rows == {
        "gfx1100": "supported",
        "gfx1030": "supported",
        "gfx1031": "runtime_only",
        "gfx1012": "unsupported",
    }
    md_rows = {r.gfx: r.status for r in compat.parse_sysreq(sample("sysreq-windows.md"))}
    assert md_rows == {"gfx1102": "supported", "gfx1032": "runtime_only", "gfx906": "unsupported"}


def test_sysreq_list_table_skips_rows_whose_target_cell_is_not_a_target() -> None:
    rows = compat.parse_sysreq(sample("sysreq-list-table.rst"))
    assert [(r.name, r.gfx, r.status) for r in rows] == [
        ("AMD Instinct MI250X", "gfx90a", "supported"),
        ("AMD Instinct MI50", "gfx906", "deprecated"),
    ]
    with pytest.raises(ValueError):
        compat.parse_sysreq("just prose")


def test_compat_matrix_rst_columns_with_combined_versions_and_footnotes() -> None:
    columns = {c.label: c for c in compat.parse_compat_matrix(sample("compatibility-matrix.rst"))}
    assert list(columns) == ["7.2.4/7.2.3", "6.4.1", "6.4.0"]
    assert columns["7.2.4/7.2.3"].versions == ("7.2.4", "7.2.3")
    assert set(columns["7.2.4/7.2.3"].targets) == {"gfx950", "gfx1201", "gfx1100", "gfx942"}
    assert columns["6.4.1"].targets["gfx1201"] == ("RDNA-OS",)
    assert set(columns["6.4.0"].targets) == {"gfx1100", "gfx942"}  # stops before FRAMEWORK
    notes = compat.parse_footnotes(sample("compatibility-matrix.rst"))
    assert notes["RDNA-OS"].endswith("RHEL 9.6.")  # continuation line joined


def test_compat_matrix_historical_csv_with_crlf_line_ends() -> None:
    assert b"\r\n" in (SAMPLES / "compatibility-matrix-historical-6.0.csv").read_bytes()
    columns = compat.parse_compat_matrix(sample("compatibility-matrix-historical-6.0.csv"))
    assert [c.label for c in columns] == ["6.1.0", "6.0.2", "6.0.0"]
    assert columns[2].targets["gfx942"] == ("mi300_600-past-60",)
    assert set(columns[0].targets) == {"gfx1100", "gfx1030", "gfx942", "gfx90a"}
    with pytest.raises(ValueError):
        compat.parse_compat_matrix("a,b\n1,2\n")


def test_footnote_limit_words_only_and_except_notes_differently() -> None:
    only = compat.footnote_limit("gfx1201", "6.4.1", "Only on Ubuntu 24.04.2 and RHEL 9.6.")
    assert only is not None and "only some systems" in only
    assert only.endswith("Ubuntu 24.04.2, RHEL 9.6.")
    excluded = compat.footnote_limit("gfx942", "6.2.0", "all *except* Ubuntu 22.04.5 [6.8 HWE]")
    assert excluded is not None and "excludes" in excluded and "[6.8 HWE]" in excluded
    assert compat.footnote_limit("gfx942", "6.2.0", "no systems named") is None


def test_gfx_sort_order_newest_first() -> None:
    assert compat.sort_gfx(["gfx908", "gfx1030", "gfx90a", "gfx1201", "gfx950", "gfx1030"]) == [
        "gfx1201",
        "gfx1030",
        "gfx950",
        "gfx90a",
        "gfx908",
    ]


# --------------------------------------------------------------------------------------------
# the recipe and generate_data.py, on the samples
# --------------------------------------------------------------------------------------------


def _build_samples(recipe: dict[str, Any] | None = None) -> compat.Built:
    recipe = recipe or yaml.safe_load(sample("recipe.yaml"))
    pins = compat.load_pins_file(SAMPLES / "sources.yaml")
    return compat.build(recipe, pins, SAMPLES, lambda used: common.generated_block(used))


def test_recipe_rows_merge_sources_and_mark_transcribed_rows() -> None:
    doc = _build_samples().compat
    first = row(doc, "linux", "5.7")
    assert first["status"] == "transcribed" and first["src"] == ["page_57"]
    six = row(doc, "linux", "6.0")
    assert six["supported"] == ["gfx1100", "gfx1030", "gfx942", "gfx90a"]
    assert six["deprecated"] == ["gfx906"]  # from the system-requirements page
    assert six["status"] == "official"
    assert "Ubuntu 22.04.3" in six["limited"]["gfx942"]  # footnote from another source
    assert row(doc, "linux", "6.4", "6.4.1")["limited"].keys() == {"gfx1201", "gfx942"}
    assert "gfx1201" not in row(doc, "linux", "6.4")["supported"]
    assert doc["latest_known"] == {"linux": "10.1.0", "windows": "10.1.0"}
    assert doc["data_as_of"] == "2026-10-05"
    for os_name in ("linux", "windows"):
        for entry in doc[os_name]:
            assert set(entry.get("limited") or {}) <= set(entry["supported"])
            assert set(entry["src"]) <= set(doc["sources"])


def test_gpus_yaml_rows_follow_the_os_list_and_exclusions() -> None:
    doc = _build_samples().compat
    linux = row(doc, "linux", "10.1")
    assert "gfx1103" in linux["supported"]  # Ryzen 7 260: Linux only
    windows = row(doc, "windows", "10.1")
    assert "gfx1103" not in windows["supported"]
    assert "gfx1200" not in windows["supported"]  # its one product is excluded by the recipe
    assert windows["products"]["gfx1151"] == ["AMD Ryzen AI Max+ 395"]
    assert "runtime_only" in row(doc, "windows", "6.4")


def test_recipe_errors_are_loud() -> None:
    recipe = yaml.safe_load(sample("recipe.yaml"))
    recipe["linux"][2]["gpus"][0]["column"] = "9.9.9"
    with pytest.raises(ValueError, match="no column"):
        _build_samples(recipe)
    recipe = yaml.safe_load(sample("recipe.yaml"))
    recipe["linux"][4]["gpus"][0] = {
        "source": "matrix",
        "format": "compat_matrix",
        "columns": ["7.2.4/7.2.3", "6.4.0"],
    }
    with pytest.raises(ValueError, match="different targets"):
        _build_samples(recipe)
    recipe = yaml.safe_load(sample("recipe.yaml"))
    recipe["linux"][0]["transcribed"]["src"] = ["nowhere"]
    with pytest.raises(ValueError, match="neither pinned nor cited"):
        _build_samples(recipe)


def _generate(tmp_path: Path, *extra: str) -> int:
    return generate_data.main(
        [
            "--sources",
            str(SAMPLES),
            "--recipe",
            str(SAMPLES / "recipe.yaml"),
            "--pins",
            str(SAMPLES / "sources.yaml"),
            "--out",
            str(tmp_path / "resources"),
            "--docs",
            str(tmp_path / "docs"),
            "--skip-pci",
            *extra,
        ]
    )


def test_generate_data_end_to_end_then_check(tmp_path: Path) -> None:
    assert _generate(tmp_path, "--check") == 1  # nothing written yet: stale
    assert not (tmp_path / "resources").exists()
    assert _generate(tmp_path) == 0
    out = tmp_path / "resources"
    made = yaml.safe_load((out / "compat.yaml").read_text(encoding="utf-8"))
    assert made["schema"] == 2 and made["generated"]["by"] == "scripts/generate_data.py"
    assert (out / "compat.yaml").read_text(encoding="utf-8").startswith("# GENERATED")
    assert {s["key"] for s in made["generated"]["sources"]} >= {"versions", "matrix", "gpus"}
    gpus = yaml.safe_load((out / "gpus.yaml").read_text(encoding="utf-8"))
    assert gpus["schema"] == 1 and len(gpus["products"]) == 6
    dataset = yaml.safe_load((out / "dataset.yaml").read_text(encoding="utf-8"))
    assert dataset["files"] == generate_data.DATASET_FILES
    assert dataset["data_as_of"] == "2026-10-05"
    page = (tmp_path / "docs" / "support-table.md").read_text(encoding="utf-8")
    assert "| `gfx1100` |" in page and "6.4.1+" in page
    assert _generate(tmp_path, "--check") == 0
    # A hand edit makes the check fail; regenerating restores the file.
    edited = (out / "compat.yaml").read_text(encoding="utf-8").replace("gfx90a", "gfx900")
    (out / "compat.yaml").write_text(edited, encoding="utf-8")
    assert _generate(tmp_path, "--check") == 1
    assert _generate(tmp_path) == 0 and _generate(tmp_path, "--check") == 0


def test_unchanged_data_keeps_its_recorded_date(tmp_path: Path) -> None:
    assert _generate(tmp_path) == 0
    target = tmp_path / "resources" / "compat.yaml"
    text = target.read_text(encoding="utf-8")
    today = yaml.safe_load(text)["generated"]["at"]
    target.write_text(text.replace(f"at: '{today}'", "at: '2001-02-03'"), encoding="utf-8")
    assert _generate(tmp_path, "--check") == 0  # only the date differs from a fresh run
    assert _generate(tmp_path) == 0
    assert "at: '2001-02-03'" in target.read_text(encoding="utf-8")


def test_missing_source_names_the_fetch_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "sources"
    empty.mkdir()
    code = generate_data.main(
        [
            "--sources",
            str(empty),
            "--recipe",
            str(SAMPLES / "recipe.yaml"),
            "--pins",
            str(SAMPLES / "sources.yaml"),
            "--out",
            str(tmp_path / "out"),
            "--docs",
            str(tmp_path / "docs"),
            "--skip-pci",
        ]
    )
    assert code == 2
    assert "fetch_data_sources.py" in capsys.readouterr().err


def test_support_table_marks_each_state() -> None:
    doc = {
        "data_as_of": "2026-10-05",
        "latest_known": {"linux": "10.1.0"},
        "linux": [
            {"series": "6.0", "supported": ["gfx1100"], "deprecated": ["gfx906"], "src": []},
            {
                "series": "6.4",
                "from": "6.4.1",
                "supported": ["gfx1201", "gfx1100"],
                "limited": {"gfx1201": "x"},
                "status": "transcribed",
            },
        ],
        "windows": [{"series": "6.0", "supported": ["gfx1030"], "runtime_only": ["gfx1031"]}],
    }
    page = table.render(doc)
    assert "| Target | Products (examples) | 6.0 | 6.4.1+* |" in page
    assert "| `gfx1201` | — |  | L |" in page
    assert "| `gfx906` | — | D |  |" in page
    assert "| `gfx1031` | — | R |" in page
    assert "data as of 2026-10-05" in page


# --------------------------------------------------------------------------------------------
# fetch_data_sources.py (file:// URLs: no network)
# --------------------------------------------------------------------------------------------


def test_fetch_downloads_every_pin_atomically(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    shutil.copy(SAMPLES / "versions.rst", origin / "versions.rst")
    pins_dir = tmp_path / "pins"
    pins_dir.mkdir()
    (pins_dir / "sources_test.yaml").write_text(
        yaml.safe_dump(
            {
                "good": {
                    "what": "x",
                    "file": "a/versions.rst",
                    "url": (origin / "versions.rst").as_uri(),
                },
                "bad": {
                    "what": "y",
                    "file": "a/missing.rst",
                    "url": (origin / "nope.rst").as_uri(),
                },
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "sources"
    assert fetch_data_sources.main(["--sources", str(out), "--pins-dir", str(pins_dir)]) == 1
    assert (out / "a" / "versions.rst").read_bytes() == (SAMPLES / "versions.rst").read_bytes()
    assert not (out / "a" / "missing.rst").exists()
    assert [p.name for p in (out / "a").iterdir()] == ["versions.rst"]  # no partial files
    assert (
        fetch_data_sources.main(["--sources", str(out), "--pins-dir", str(pins_dir), "good"]) == 0
    )
    assert fetch_data_sources.main(["--sources", str(out), "--pins-dir", str(pins_dir), "x"]) == 2


def test_every_shipped_pin_has_a_commit_url_and_a_date() -> None:
    for name in ("sources_compat.yaml",):
        for key, pin in common.load_pins(name).items():
            assert pin.commit and pin.commit in pin.url, key
            assert pin.url.startswith("https://raw.githubusercontent.com/"), key
            assert len(pin.date) == 10, key
    assert set(fetch_data_sources.load_all_pins(SCRIPTS / "datagen")) >= set(
        common.load_pins("sources_compat.yaml")
    )


# --------------------------------------------------------------------------------------------
# facts of the shipped files
# --------------------------------------------------------------------------------------------


def test_shipped_releases_through_10_1_with_dates() -> None:
    """ROCm/rocm-docs docs/release/versions.rst @9bcf25db (read 2026-12)."""
    doc = shipped("compat.yaml")
    dates = {r["version"]: r["date"] for r in doc["releases"]}
    assert dates["7.2.4"] == "2026-05-29"
    assert dates["7.14.0"] == "2026-07-15"
    assert dates["7.14.1"] == "2026-09-02"
    assert dates["10.0.0"] == "2026-08-26"
    assert dates["10.1.0"] == "2026-10-05"
    assert doc["data_as_of"] == "2026-10-05"
    assert doc["latest_known"] == {"linux": "10.1.0", "windows": "10.1.0"}


def test_shipped_current_list_names_the_newer_apus_and_rx_7600() -> None:
    """ROCm/rocm-docs docs/data/gpus.yaml @793e0c2e: RX 7600 (gfx1102), Ryzen 200 (gfx1103),
    Ryzen AI 300/400 and Max (gfx1150-gfx1153)."""
    wanted = {"gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}
    doc = shipped("compat.yaml")
    assert wanted <= set(row(doc, "linux", "10.1")["supported"])
    assert wanted <= set(row(doc, "windows", "10.1")["supported"])
    products = {p["gfx"] for p in shipped("gpus.yaml")["products"]}
    assert wanted <= products
    ryzen_200 = [
        p for p in shipped("gpus.yaml")["products"] if p["series"] == "AMD Ryzen 200 Series"
    ]
    assert ryzen_200 and all(p["gfx"] == "gfx1103" for p in ryzen_200)


def test_shipped_5_7_counts_rocm_on_radeon_as_limited() -> None:
    """AMD 'ROCm on Radeon' docs for Radeon Software for Linux with ROCm 5.7 (RX 7900 XTX,
    Radeon PRO W7900; issue 11, transcribed)."""
    first = row(shipped("compat.yaml"), "linux", "5.7")
    assert "gfx1100" in first["supported"] and "gfx1100" in first["limited"]
    assert first["status"] == "transcribed"


def test_shipped_windows_7_1_row_exists() -> None:
    """HIP SDK 7.1.x: only the targets AMD's 6.4.2 and 7.2 Windows pages both list."""
    win71 = row(shipped("compat.yaml"), "windows", "7.1")
    assert {"gfx1100", "gfx1151", "gfx1201"} <= set(win71["supported"])
    assert "gfx1030" not in win71["supported"]


def test_shipped_6_4_1_adds_rdna4_limited_and_6_x_deprecates_gfx906() -> None:
    """ROCm/legacy-rocm-build compatibility-matrix.rst @076345c0 (6.4.1 column, RDNA-OS note);
    rocm-install-on-linux system-requirements 6.0-6.2 (MI50 deprecated)."""
    doc = shipped("compat.yaml")
    later = row(doc, "linux", "6.4", "6.4.1")
    assert {"gfx1201", "gfx1200", "gfx1101"} <= set(later["limited"])
    assert "gfx1201" not in row(doc, "linux", "6.4")["supported"]
    for series in ("6.0", "6.1", "6.2"):
        assert row(doc, "linux", series)["deprecated"] == ["gfx906"]


def test_shipped_compat_yaml_is_consistent() -> None:
    doc = shipped("compat.yaml")
    assert doc["schema"] == 2
    assert not {"overrides", "override_facts", "linux_unlisted_products"} & set(doc)
    for os_name in ("linux", "windows"):
        seen = set()
        for entry in doc[os_name]:
            start = entry.get("from") or f"{entry['series']}.0"
            assert start not in seen
            seen.add(start)
            assert entry["status"] in ("official", "transcribed")
            assert set(entry.get("limited") or {}) <= set(entry["supported"])
            assert entry["src"] and set(entry["src"]) <= set(doc["sources"])
    pinned = {s["key"] for s in doc["generated"]["sources"]}
    assert pinned <= set(common.load_pins("sources_compat.yaml"))


def test_shipped_support_table_matches_the_shipped_data() -> None:
    doc = shipped("compat.yaml")
    page = (ROOT / "docs" / "support-table.md").read_text(encoding="utf-8")
    assert page == table.render(doc, shipped("gpus.yaml"))
    assert "| 10.1 |" in page


def test_shipped_files_are_what_the_pinned_sources_generate(tmp_path: Path) -> None:
    """Never silently stale: with the pinned sources fetched, regenerating changes nothing."""
    sources = ROOT / ".data-sources"
    if not (sources / "compat" / "versions.rst").is_file():
        pytest.skip(".data-sources/ not fetched (scripts/fetch_data_sources.py)")
    code = generate_data.main(["--sources", str(sources), "--skip-pci", "--check"])
    assert code == 0
