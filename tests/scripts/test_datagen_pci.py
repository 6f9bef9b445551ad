"""The PCI id generator (scripts/datagen/pci.py): its parsers on small committed excerpts of
amdgpu_drv.c, kfd_device.c and pci.ids (tests/scripts/samples/pci/), the codename rules, and
build() on those excerpts as a sources folder."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from datagen import pci  # noqa: E402

SAMPLES = Path(__file__).resolve().parent / "samples" / "pci"
LOCAL_SOURCES = ROOT / ".data-sources"
# The shipped pins without the hash and size of the local copies: the samples are excerpts.
SAMPLE_PINS = {
    key: dataclasses.replace(pin, sha256="", bytes=None)
    for key, pin in pci.common.load_pins(pci.PINS).items()
}


def _sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------- amdgpu_drv.c


def test_pciidlist_gives_chip_and_apu_flag_per_id() -> None:
    ids = pci.parse_pciidlist(_sample("amdgpu_drv.c"))
    assert ids["687f"] == ("VEGA10", False)  # upper and lower case hex alike
    assert ids["67df"] == ("POLARIS10", False)
    assert ids["15dd"] == ("RAVEN", True)  # CHIP_RAVEN|AMD_IS_APU
    assert ids["6798"] == ("TAHITI", False)


def test_pciidlist_reads_only_the_id_table() -> None:
    ids = pci.parse_pciidlist(_sample("amdgpu_drv.c"))
    assert "6780" not in ids  # amdgpu_unsupported_pciidlist, above the table
    assert "67ff" not in ids  # asic_type_quirks, below it
    assert len(ids) == 6  # the class-bound CHIP_IP_DISCOVERY entries carry no id


def test_pciidlist_missing_is_an_error() -> None:
    with pytest.raises(ValueError, match="pciidlist"):
        pci.parse_pciidlist("static int x;\n")


# ---------------------------------------------------------------- kfd_device.c


def test_kfd_targets_by_chip_case_and_by_chip_comment() -> None:
    chips, _ = pci.parse_kfd(_sample("kfd_device.c"))
    assert chips["POLARIS10"] == chips["FIJI"] == 80003  # two case labels, one value
    assert chips["TONGA"] == 80002
    assert chips["VEGA10"] == 90000  # "/* Vega 10 */" above GC 9.0.1
    assert chips["RAVEN"] == 90002  # one comment over two GC versions with one target
    assert chips["VANGOGH"] == 100303
    assert chips["BEIGEGOBY"] == 100304


def test_kfd_targets_by_gc_version() -> None:
    _, gcs = pci.parse_kfd(_sample("kfd_device.c"))
    assert gcs[(9, 0, 1)] == 90000
    assert gcs[(9, 1, 0)] == gcs[(9, 2, 2)] == 90002
    assert gcs[(11, 0, 3)] == 110001  # the hardware 11.0.3 is the compiler's 11.0.1
    assert gcs[(11, 5, 3)] == 110503  # indented with spaces in the kernel source


def test_kfd_target_chosen_at_run_time_is_ambiguous_not_guessed() -> None:
    chips, gcs = pci.parse_kfd(_sample("kfd_device.c"))
    assert gcs[(9, 4, 3)] is None  # "rev_id >= 1 ? 90402 : ..." in older kernels
    # comments inside a case, or outside kgd2kfd_probe, name no chip
    assert not any("NOTE" in k or "NAVI2X" in k or "AFTER" in k for k in chips)
    assert (12, 0, 0) not in gcs  # a switch after the function is not read


def test_kfd_two_values_for_one_key_are_ambiguous() -> None:
    text = (
        "struct kfd_dev *kgd2kfd_probe(void)\n{\n"
        "case IP_VERSION(9, 4, 3): gfx_target_version = 90400; break;\n"
        "case IP_VERSION(9, 4, 3): gfx_target_version = 90402; break;\n"
        "case IP_VERSION(9, 5, 0): gfx_target_version = 90500; break;\n}\n"
    )
    _, gcs = pci.parse_kfd(text)
    assert gcs == {(9, 4, 3): None, (9, 5, 0): 90500}


def test_kfd_reads_the_definition_not_a_mention_or_prototype() -> None:
    text = (
        "/* kgd2kfd_probe() is called by amdgpu */\n"
        "struct kfd_dev *kgd2kfd_probe(struct amdgpu_device *adev, bool vf);\n"
        "static void f(void)\n{\ncase IP_VERSION(1, 0, 0): gfx_target_version = 1; break;\n}\n"
        "struct kfd_dev *kgd2kfd_probe(struct amdgpu_device *adev,\n\tbool vf)\n{\n"
        "case IP_VERSION(9, 0, 1): gfx_target_version = 90000; break;\n}\n"
    )
    assert pci.parse_kfd(text) == ({}, {(9, 0, 1): 90000})


def test_kfd_without_probe_function_is_an_error() -> None:
    with pytest.raises(ValueError, match="kgd2kfd_probe"):
        pci.parse_kfd("int main(void)\n{\n}\n")


@pytest.mark.parametrize(
    ("target", "name"),
    [
        (90010, "gfx90a"),
        (90000, "gfx900"),
        (100300, "gfx1030"),
        (110501, "gfx1151"),
        (120500, "gfx1250"),
    ],
)
def test_gfx_name_of_a_kfd_target(target: int, name: str) -> None:
    assert pci.gfx_name(target) == name


# ---------------------------------------------------------------- pci.ids


def test_pci_ids_reads_one_vendors_device_lines() -> None:
    names = pci.parse_pci_ids(_sample("pci.ids.1002"))
    assert names["744c"] == "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]"
    assert names["1902"] == "Krackan2"
    assert "0010" not in names and "0201" not in names  # vendors 1001 and 1003
    assert "103c" not in names  # a subsystem line (two tabs)
    assert len(names) == 13


def test_pci_ids_header_gives_version_and_date() -> None:
    assert pci.pci_ids_header(_sample("pci.ids.1002")) == ("2026.05.24", "2026-05-24")
    assert pci.pci_ids_header("1002  AMD\n") == (None, None)


@pytest.mark.parametrize(
    ("pci_name", "code", "products"),
    [
        ("Navi 31 [Radeon RX 7900 XT/7900 XTX]", "Navi 31", "Radeon RX 7900 XT/7900 XTX"),
        ("Krackan2", "Krackan2", None),
        ("Navi 32 GL-XL [AMD Radeon PRO V710]", "Navi 32 GL-XL", "AMD Radeon PRO V710"),
    ],
)
def test_split_name(pci_name: str, code: str, products: str | None) -> None:
    assert pci.split_name(pci_name) == (code, products)


def test_display_names() -> None:
    name = pci.display_name("Navi 31 [Radeon RX 7900 XT/7900 XTX]", False, "")
    assert name == "AMD Radeon RX 7900 XT / 7900 XTX (Navi 31)"
    assert pci.display_name("VanGogh [AMD Custom GPU 0405]", True, "") == (
        "AMD Custom GPU 0405 (VanGogh)"  # no doubled "AMD"
    )
    assert pci.display_name("Krackan2", True, "") == "AMD Radeon Graphics (Krackan2)"
    assert pci.display_name(None, False, "Beige Goby") == "AMD GPU (Beige Goby)"
    assert pci.display_name("Phoenix1", True, "", "Radeon 780M") == "AMD Radeon 780M (Phoenix1)"


# ---------------------------------------------------------------- codenames.yaml


def _rows(text: str) -> dict[str, pci.Codename]:
    head = "sources:\n  s1: {what: a source}\ncodenames:\n"
    return pci.parse_codenames(head + text)[1]


def test_codename_rows_parse() -> None:
    rows = _rows(
        '  "Navi 31": {gfx: gfx1100, integrated: false, src: [s1]}\n'
        '  "Raphael": {gc: "10.3.6", integrated: true, src: [s1]}\n'
        "  Aqua:\n    integrated: false\n    by_product:\n"
        "      - {match: MI35, gfx: gfx950, src: [s1]}\n"
    )
    assert rows["Navi 31"].gfx == "gfx1100" and rows["Navi 31"].status == "derived"
    assert rows["Raphael"].gc == (10, 3, 6) and rows["Raphael"].integrated
    assert rows["Aqua"].by_product == (("MI35", "gfx950", ("s1",)),)


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ("X: {gfx: gfx1100, src: [s1]}", "integrated"),
        ("X: {gfx: gfx1100, chip: VEGA10, integrated: false, src: [s1]}", "exactly one"),
        ("X: {integrated: false, src: [s1]}", "exactly one"),
        ("X: {gfx: gfx1100, integrated: false}", "no source"),
        ("X: {gfx: gfx1100, integrated: false, src: [nowhere]}", "unknown sources"),
        ('X: {gc: "11.0", integrated: false, src: [s1]}', "MAJOR.MINOR.REV"),
    ],
)
def test_codename_row_rules(row: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        _rows(f"  {row}\n")


def test_codename_match_allows_chip_variants_only() -> None:
    rows = _rows('  "Navi 32": {gfx: gfx1101, integrated: false, src: [s1]}\n')
    assert pci.match_codename("Navi 32", rows) is rows["Navi 32"]
    assert pci.match_codename("Navi 32 GL-XL", rows) is rows["Navi 32"]
    assert pci.match_codename("Navi 32 USB", rows) is None
    assert pci.match_codename("Navi 32 HDMI/DP Audio", rows) is None
    assert pci.match_codename("Navi 321", rows) is None


def test_shipped_codenames_file_parses_and_cites_its_sources() -> None:
    cited, rows = pci.parse_codenames((ROOT / "scripts/datagen/codenames.yaml").read_text())
    assert rows["Krackan2"].gfx == "gfx1153"  # AMD kernel review (krackan2_review), not gfx1152
    assert rows["Navi 44"].gfx == "gfx1200" and rows["Navi 48"].gfx == "gfx1201"
    for key, entry in cited.items():
        assert entry.get("what") and (entry.get("url") or entry.get("commit")), key


def test_pins_name_a_commit_and_a_raw_url_for_each_source() -> None:
    pins = pci.common.load_pins(pci.PINS)
    assert set(pins) == {"amdgpu_drv_c", "kfd_device_c", "pciids"}
    for pin in pins.values():
        assert len(pin.commit) == 40 and pin.commit in pin.url, pin.key
        assert pin.url.startswith("https://raw.githubusercontent.com/"), pin.key


# ---------------------------------------------------------------- build()


@pytest.fixture(scope="module")
def sample_doc() -> dict[str, object]:
    doc, _ = pci.build(SAMPLES, SAMPLE_PINS)
    return doc


def _devices(doc: dict[str, object]) -> dict[str, dict[str, object]]:
    devices = doc["devices"]
    assert isinstance(devices, dict)
    return devices


def test_build_official_rows_from_the_kernel(sample_doc: dict[str, object]) -> None:
    devices = _devices(sample_doc)
    assert devices["687f"] == {
        "name": "AMD Radeon RX Vega 56 / 64 (Vega 10 XL/XT)",
        "gfx": "gfx900",
        "integrated": False,
        "src": ["amdgpu_drv_c", "kfd_device_c", "pciids"],
        "status": "official",
    }
    assert devices["15dd"]["integrated"] is True and devices["15dd"]["gfx"] == "gfx902"
    assert devices["67df"]["gfx"] == "gfx803"  # Polaris kept: gfx803 is the oldest target
    # an id pci.ids does not name: the chip names it, and pci.ids is not cited
    assert devices["7424"]["name"] == "AMD GPU (Beige Goby)"
    assert devices["7424"]["src"] == ["amdgpu_drv_c", "kfd_device_c"]


def test_build_leaves_out_chips_older_than_gfx803(sample_doc: dict[str, object]) -> None:
    devices = _devices(sample_doc)
    assert "6939" not in devices  # Tonga, gfx802
    assert "6798" not in devices  # Tahiti: KFD has no target at all


def test_build_derived_rows_from_codenames(sample_doc: dict[str, object]) -> None:
    devices = _devices(sample_doc)
    assert devices["744c"]["gfx"] == "gfx1100" and devices["744c"]["status"] == "derived"
    assert devices["744c"]["src"] == ["pciids", "arch_specs", "gpus_yaml"]
    assert devices["7460"]["gfx"] == "gfx1101"  # "Navi 32 GL-XL"
    assert devices["74a2"]["gfx"] == "gfx942"  # Aqua Vanjaram, MI308X: MI300 line
    assert devices["75a0"]["gfx"] == "gfx950"  # Aqua Vanjaram, MI350X
    assert devices["1902"]["gfx"] == "gfx1153"  # Krackan2
    # by kernel chip: codenames.yaml says VanGogh is CHIP_VANGOGH, KFD gives the target
    assert devices["163f"]["gfx"] == "gfx1033" and "kfd_device_c" in devices["163f"]["src"]
    assert "7446" not in devices and "ab30" not in devices  # USB and audio functions


def test_build_gc_map_and_dates(sample_doc: dict[str, object]) -> None:
    gc_map = sample_doc["gc_ip_targets"]
    assert isinstance(gc_map, dict)
    assert gc_map["11.0.3"] == "gfx1101" and gc_map["10.3.1"] == "gfx1033"
    assert "9.4.3" not in gc_map  # ambiguous in the sample's (older) kernel text
    # the newest pinned date: pci.ids' (2026-10-09), newer than the kernel pins (no date)
    assert sample_doc["data_as_of"] == pci.common.load_pins(pci.PINS)["pciids"].date
    generated = sample_doc["generated"]
    assert isinstance(generated, dict)
    assert [s["key"] for s in generated["sources"]] == ["amdgpu_drv_c", "kfd_device_c", "pciids"]
    sources = sample_doc["sources"]
    assert isinstance(sources, dict)
    for entry in _devices(sample_doc).values():
        assert all(key in sources for key in entry["src"]), entry  # type: ignore[union-attr]


def test_build_fails_when_a_codename_points_at_what_kfd_lacks(tmp_path: Path) -> None:
    for name in ("amdgpu_drv.c", "pci.ids.1002"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    kfd = _sample("kfd_device.c").replace("/* Van Gogh */", "/* renamed */")
    (tmp_path / "kfd_device.c").write_text(kfd, encoding="utf-8")
    with pytest.raises(ValueError, match="VanGogh"):
        pci.build(tmp_path, SAMPLE_PINS)


def test_build_names_the_missing_local_copy(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="fetch_data_sources"):
        pci.build(tmp_path, SAMPLE_PINS)


def test_written_file_is_what_the_package_reads(
    tmp_path: Path, sample_doc: dict[str, object]
) -> None:
    from rocmpanel.machine.pci_ids import parse_table

    out = tmp_path / pci.OUTPUT
    pci.common.write_yaml(out, sample_doc, pci.HEADER)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# rocmpanel:") and "GENERATED" in text
    table = parse_table(text)
    assert table.lookup("1002:744c").gfx == "gfx1100"  # type: ignore[union-attr]
    assert table.gc_targets[(11, 5, 3)] == "gfx1153"
    assert table.data_as_of == sample_doc["data_as_of"]
    assert [s.key for s in table.generated] == ["amdgpu_drv_c", "kfd_device_c", "pciids"]


def test_build_maps_mi350p_by_its_own_rule(tmp_path: Path) -> None:
    # pci.ids 2026.10.09 adds "75a8  Aqua Vanjaram [Instinct MI350P]"; the shipped codenames
    # cite gpus.yaml alone for it (the arch-specs page lists only MI350X and MI355X)
    for name in ("amdgpu_drv.c", "kfd_device.c"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    ids = _sample("pci.ids.1002").replace(
        "\tab30  Navi 31", "\t75a8  Aqua Vanjaram [Instinct MI350P]\n\tab30  Navi 31"
    )
    (tmp_path / "pci.ids.1002").write_text(ids, encoding="utf-8")
    devices = _devices(pci.build(tmp_path, SAMPLE_PINS)[0])
    assert devices["75a8"] == {
        "name": "AMD Instinct MI350P (Aqua Vanjaram)",
        "gfx": "gfx950",
        "integrated": False,
        "src": ["pciids", "gpus_yaml"],
        "status": "derived",
    }
    assert devices["75a0"]["src"] == ["pciids", "arch_specs", "gpus_yaml"]  # MI350X


@pytest.mark.skipif(
    not (LOCAL_SOURCES / "pci.ids.1002").is_file(), reason="no local copy of pci.ids"
)
def test_local_pci_ids_copy_is_the_pinned_version() -> None:
    pin = pci.common.load_pins(pci.PINS)["pciids"]
    version, date = pci.pci_ids_header(pci.common.read_source(LOCAL_SOURCES, pin))
    assert date == pin.date, "the local pci.ids copy is not the pinned one: fetch it again"
    assert version is not None and f"version {version}" in pin.what


@pytest.mark.skipif(
    not (LOCAL_SOURCES / "kfd_device.c").is_file(), reason="no local copies of the sources"
)
def test_shipped_table_is_what_the_pinned_sources_give() -> None:
    doc, _ = pci.build(LOCAL_SOURCES)
    shipped = yaml.safe_load((ROOT / "resources" / pci.OUTPUT).read_text(encoding="utf-8"))
    for key in ("devices", "gc_ip_targets", "sources", "data_as_of"):
        assert shipped[key] == doc[key], f"resources/{pci.OUTPUT} is stale: rerun the generator"
