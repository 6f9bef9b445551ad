"""The data generator on bad input: all or nothing is written, local copies are checked
against their pins (sha256, size), every failure is one clean error naming its file, and a
FIFO or device in place of an input is refused instead of read. Samples: tests/scripts/samples."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
SAMPLES = Path(__file__).resolve().parent / "samples"
LOCAL_SOURCES = ROOT / ".data-sources"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import fetch_data_sources  # noqa: E402
import generate_data  # noqa: E402
from datagen import common, compat, excerpts, pci  # noqa: E402

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A copy of the compat and PCI samples as one sources folder, with pins that carry each
    copy's sha256 and size (compat: sources.yaml; PCI: sources_pci.yaml)."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "compat", src)
    for path in (SAMPLES / "pci").iterdir():
        shutil.copy(path, src / path.name)
    pins = yaml.safe_load((src / "sources.yaml").read_text(encoding="utf-8"))
    for pin in pins.values():
        data = (src / pin["file"]).read_bytes()
        pin.update(sha256=_sha(data), bytes=len(data))
    (src / "sources.yaml").write_text(yaml.safe_dump(pins, sort_keys=False), encoding="utf-8")
    pci_pins = yaml.safe_load((SCRIPTS / "datagen" / pci.PINS).read_text(encoding="utf-8"))
    for pin in pci_pins.values():
        data = (src / pin["file"]).read_bytes()
        pin.update(sha256=_sha(data), bytes=len(data))
        pin.pop("excerpt", None)  # the samples are hand-made excerpts, not the rule's
    (src / "sources_pci.yaml").write_text(yaml.safe_dump(pci_pins), encoding="utf-8")
    return tmp_path


def _args(tmp: Path, *extra: str, docs: Path | None = None) -> list[str]:
    src = tmp / "src"
    return [
        "--sources",
        str(src),
        "--recipe",
        str(src / "recipe.yaml"),
        "--pins",
        str(src / "sources.yaml"),
        "--pci-pins",
        str(src / "sources_pci.yaml"),
        "--out",
        str(tmp / "out"),
        "--docs",
        str(docs or tmp / "docs"),
        *extra,
    ]


def _snapshot(*folders: Path) -> dict[str, bytes]:
    """Every file under ``folders`` (names of temporary files included) with its bytes."""
    found: dict[str, bytes] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")) if folder.exists() else ():
            if path.is_file():
                found[str(path)] = path.read_bytes()
    return found


def _stale_tree(tree: Path) -> dict[str, bytes]:
    """Generates into tree/out and tree/docs, then edits every output so that each would be
    rewritten; the state a failed run must leave alone."""
    assert generate_data.main(_args(tree)) == 0
    for path in [*(tree / "out").iterdir(), *(tree / "docs").iterdir()]:
        path.write_text(path.read_text(encoding="utf-8") + "# hand edit\n", encoding="utf-8")
    return _snapshot(tree / "out", tree / "docs")


# --------------------------------------------------------------------------------------------
# 1. all or nothing
# --------------------------------------------------------------------------------------------


def test_docs_pointing_at_a_file_writes_nothing(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _stale_tree(tree)
    not_a_folder = tree / "docs-file"
    not_a_folder.write_text("a file\n", encoding="utf-8")
    capsys.readouterr()
    assert generate_data.main(_args(tree, docs=not_a_folder)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --docs ") and "is not a folder" in err
    assert "Traceback" not in err
    assert _snapshot(tree / "out", tree / "docs") == before  # pci_ids.yaml and all the rest
    assert not_a_folder.read_text(encoding="utf-8") == "a file\n"


def test_a_write_that_fails_midway_puts_every_file_back(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _stale_tree(tree)
    real_replace = os.replace
    calls: list[str] = []

    def failing_replace(src: Any, dst: Any) -> None:
        calls.append(str(dst))
        if len(calls) == 3:  # two outputs already replaced
            raise OSError(28, "No space left on device", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(generate_data.os, "replace", failing_replace)
    assert generate_data.main(_args(tree)) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "put back" in err
    assert _snapshot(tree / "out", tree / "docs") == before  # no temporary files either


def test_a_staging_failure_leaves_no_new_folders_or_temporary_files(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_stage = generate_data._stage
    staged: list[Path] = []

    def failing_stage(target: Path, text: str) -> Path:
        if len(staged) == 3:
            raise OSError(5, "Input/output error", str(target))
        staged.append(real_stage(target, text))
        return staged[-1]

    monkeypatch.setattr(generate_data, "_stage", failing_stage)
    out_docs = tmp_path / "new" / "docs"
    assert generate_data.main(_args(tree, docs=out_docs)) == 2
    assert len(staged) == 3 and not any(p.exists() for p in staged)
    assert not (tree / "out").exists() and not (tmp_path / "new").exists()


def test_a_rewritten_file_keeps_its_mode(tree: Path) -> None:
    _stale_tree(tree)
    target = tree / "out" / "compat.yaml"
    target.chmod(0o640)
    assert generate_data.main(_args(tree)) == 0
    assert "hand edit" not in target.read_text(encoding="utf-8")
    assert target.stat().st_mode & 0o777 == 0o640


# --------------------------------------------------------------------------------------------
# 2. local copies checked against their pins
# --------------------------------------------------------------------------------------------


def _cut_in_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(
    "name", ["versions.rst", "compatibility-matrix-historical-6.0.csv", "pci.ids.1002"]
)
def test_a_cut_local_copy_is_refused_by_its_hash(
    tree: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _stale_tree(tree)
    _cut_in_half(tree / "src" / name)
    capsys.readouterr()
    assert generate_data.main(_args(tree)) == 2
    err = capsys.readouterr().err
    assert f"{name} differs from the pinned copy (sha256 " in err
    assert "re-fetch with scripts/fetch_data_sources.py " in err
    assert _snapshot(tree / "out", tree / "docs") == before


def test_an_empty_footnotes_file_is_refused(tree: Path) -> None:
    (tree / "src" / "footnotes.rst").write_text("", encoding="utf-8")
    pins = compat.load_pins_file(tree / "src" / "sources.yaml")
    with pytest.raises(common.DataError, match="differs from the pinned copy"):
        common.read_source(tree / "src", pins["footnotes"])


def test_without_hashes_a_cut_footnotes_file_still_fails_on_meaning() -> None:
    """Sample pins carry no hash; a footnotes file that lacks a note the matrix marks is
    caught by the build itself."""
    pins = compat.load_pins_file(SAMPLES / "compat" / "sources.yaml")
    assert all(not pin.sha256 for pin in pins.values())
    recipe = yaml.safe_load((SAMPLES / "compat" / "recipe.yaml").read_text(encoding="utf-8"))
    stub = dataclasses.replace(pins["footnotes"], file="versions.rst")  # no notes at all
    pins["footnotes"] = stub
    with pytest.raises(common.DataError, match=r"source footnotes .*no footnote mi300"):
        compat.build(recipe, pins, SAMPLES / "compat", common.generated_block)


def test_a_cut_release_history_fails_on_meaning_without_hashes(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "compat", tmp_path / "src")
    versions = tmp_path / "src" / "versions.rst"
    text = versions.read_text(encoding="utf-8")
    versions.write_text(text[: text.index("6.1.0")], encoding="utf-8")  # drops 6.x and 5.7
    recipe = yaml.safe_load((SAMPLES / "compat" / "recipe.yaml").read_text(encoding="utf-8"))
    pins = compat.load_pins_file(SAMPLES / "compat" / "sources.yaml")
    with pytest.raises(common.DataError, match=r"no release any 5\.7\.x"):
        compat.build(recipe, pins, tmp_path / "src", common.generated_block)


def test_check_copy_compares_size_and_hash() -> None:
    data = b"pinned copy\n"
    pin = common.Source(key="k", what="w", file="f", url="u")
    common.check_copy(b"anything", pin, "f")  # no hash, no size: nothing checked
    common.check_copy(data, dataclasses.replace(pin, sha256=_sha(data), bytes=len(data)), "f")
    with pytest.raises(common.DataError, match="12 bytes; pinned -, 11 bytes"):
        common.check_copy(data, dataclasses.replace(pin, bytes=11), "f")
    with pytest.raises(common.DataError, match=f"sha256 {_sha(data)}.*fetch_data_sources.py k"):
        common.check_copy(data, dataclasses.replace(pin, sha256="0" * 64), "f")


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ({"what": "w", "file": "f", "url": "u", "sha": "x"}, "unknown fields"),
        ({"what": "w", "file": "f", "url": "u", "sha256": "ABC"}, "64 lower-case hex"),
        ({"what": "w", "file": "f", "url": "u", "bytes": "12"}, "size in bytes"),
        ({"what": "w", "file": "/etc/passwd", "url": "u"}, "relative path"),
        ({"what": "w", "file": "../x", "url": "u"}, "relative path"),
        ({"what": "w", "file": "f"}, "needs url"),
        ({"what": "w", "file": "f", "url": "u", "excerpt": "nope"}, "unknown excerpt rule"),
        ({"what": "w", "file": "f", "url": ["u"]}, "single value"),
        ("just text", "not a mapping"),
    ],
)
def test_pins_are_checked(entry: Any, error: str) -> None:
    with pytest.raises(common.DataError, match=error):
        common.parse_pins({"key": entry}, "sources_x.yaml")


def test_every_shipped_pin_records_its_local_copy() -> None:
    for name in ("sources_compat.yaml", "sources_pci.yaml"):
        for key, pin in common.load_pins(name).items():
            assert len(pin.sha256) == 64 and pin.bytes, (name, key)
    excerpted = {k: p.excerpt for k, p in common.load_pins("sources_pci.yaml").items()}
    assert excerpted == {
        "amdgpu_drv_c": "pciidlist",
        "kfd_device_c": "kgd2kfd_probe",
        "pciids": "pci_ids_1002",
    }


@pytest.mark.skipif(
    not (LOCAL_SOURCES / "compat" / "versions.rst").is_file(), reason=".data-sources/ not fetched"
)
def test_local_copies_are_the_pinned_ones() -> None:
    for name in ("sources_compat.yaml", "sources_pci.yaml"):
        for pin in common.load_pins(name).values():
            text = common.read_source(LOCAL_SOURCES, pin)  # raises when it differs
            if pin.excerpt:
                assert excerpts.cut(pin.excerpt, text) == text, pin.key  # the rule's own cut


def test_excerpt_rules_cut_the_part_the_parsers_read() -> None:
    drv = (SAMPLES / "pci" / "amdgpu_drv.c").read_text(encoding="utf-8")
    cut = excerpts.cut("pciidlist", drv)
    assert cut.startswith("static const struct pci_device_id pciidlist[] = {\n")
    assert cut.endswith("\nMODULE_DEVICE_TABLE(pci, pciidlist);\n")
    assert "asic_type_quirks" not in cut and "amdgpu_unsupported_pciidlist" not in cut
    assert pci.parse_pciidlist(cut) == pci.parse_pciidlist(drv)
    kfd = (SAMPLES / "pci" / "kfd_device.c").read_text(encoding="utf-8")
    probe = "struct kfd_dev *kgd2kfd_probe(struct amdgpu_device *adev, bool vf);\n"
    cut = excerpts.cut("kgd2kfd_probe", probe + kfd)  # a prototype is not the definition
    assert cut.startswith("struct kfd_dev *kgd2kfd_probe(") and cut.endswith("\n}\n")
    assert "a comment outside kgd2kfd_probe" not in cut
    assert pci.parse_kfd(cut) == pci.parse_kfd(kfd)
    ids = (SAMPLES / "pci" / "pci.ids.1002").read_text(encoding="utf-8")
    full = ids.replace("\t15dd  ", "\t\t1043 1234  a subsystem line\n# a comment\n\t15dd  ", 1)
    cut = excerpts.cut("pci_ids_1002", full + "1003  Next vendor\n\t0201  a device\n")
    assert cut.startswith("#\n#\tList of PCI IDs") and "\n\n1002  Advanced Micro" in cut
    assert "1001  Kolter" not in cut and "subsystem" not in cut and "Next vendor" not in cut
    assert pci.parse_pci_ids(cut) == pci.parse_pci_ids(ids)
    for rule in excerpts.RULES:
        with pytest.raises(ValueError):
            excerpts.cut(rule, "nothing of it here\n")
        once = excerpts.cut(rule, full if "ids" in rule else drv + kfd)
        assert excerpts.cut(rule, once) == once  # an excerpt is its own excerpt


# --------------------------------------------------------------------------------------------
# the fetch step checks downloads against the pins (file:// URLs: no network)
# --------------------------------------------------------------------------------------------


def _fetch_setup(tmp_path: Path, **pins: dict[str, Any]) -> tuple[Path, Path]:
    pins_dir = tmp_path / "pins"
    pins_dir.mkdir()
    doc = {key: {"what": key, **entry} for key, entry in pins.items()}
    (pins_dir / "sources_t.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return pins_dir, tmp_path / "sources"


def _fetch(pins_dir: Path, out: Path, *keys: str) -> int:
    return fetch_data_sources.main(["--sources", str(out), "--pins-dir", str(pins_dir), *keys])


def test_fetch_checks_the_download_against_the_pin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    origin = SAMPLES / "compat" / "versions.rst"
    data = origin.read_bytes()
    url = origin.as_uri()
    pins_dir, out = _fetch_setup(
        tmp_path,
        good={"file": "good.rst", "url": url, "sha256": _sha(data), "bytes": len(data)},
        changed={"file": "changed.rst", "url": url, "sha256": "0" * 64},
        new={"file": "new.rst", "url": url},
    )
    out.mkdir()
    (out / "changed.rst").write_bytes(b"the old copy\n")
    assert _fetch(pins_dir, out) == 1
    printed = capsys.readouterr()
    assert (out / "good.rst").read_bytes() == data
    assert (out / "changed.rst").read_bytes() == b"the old copy\n"  # not replaced
    assert f"FAILED changed: {url}: the download of {url} differs" in printed.err
    assert f"sha256 {_sha(data)}" in printed.err  # the new hash, to re-pin with
    assert (out / "new.rst").read_bytes() == data
    assert f"no hash pinned, add to the pin: sha256: {_sha(data)}  bytes: {len(data)}" in (
        printed.out
    )
    assert sorted(p.name for p in out.iterdir()) == ["changed.rst", "good.rst", "new.rst"]


def test_fetch_keeps_the_pins_excerpt_and_checks_that(tmp_path: Path) -> None:
    excerpt = (SAMPLES / "pci" / "pci.ids.1002").read_text(encoding="utf-8")
    upstream = tmp_path / "pci.ids"
    upstream.write_text(
        excerpt.replace("\t15dd  ", "\t\t1043 1234  subsystem\n\t15dd  ", 1), encoding="utf-8"
    )
    kept = excerpts.cut("pci_ids_1002", excerpt).encode("utf-8")
    pins_dir, out = _fetch_setup(
        tmp_path,
        pciids={
            "file": "pci.ids.1002",
            "url": upstream.as_uri(),
            "excerpt": "pci_ids_1002",
            "sha256": _sha(kept),
            "bytes": len(kept),
        },
    )
    assert _fetch(pins_dir, out) == 0
    assert (out / "pci.ids.1002").read_bytes() == kept


def test_fetch_refuses_bad_pins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pins_dir, out = _fetch_setup(tmp_path, bad={"file": "x", "url": "u", "sha256": "no"})
    assert _fetch(pins_dir, out) == 2
    assert "64 lower-case hex" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# 3. one clean error per failure
# --------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


BREAKS: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    "gpus.yaml is a list": (
        lambda src: _write(src / "gpus.yaml", "- 1\n"),
        ["source gpus (", "gpus.yaml): the product list is a list", "expected AMD's product"],
    ),
    "os-support.yaml is text": (
        lambda src: _write(src / "os-support.yaml", "hello world\n"),
        ["source os_support (", "os-support.yaml): the OS list is a str", "expected AMD's OS"],
    ),
    "os-support.yaml entry is text": (
        lambda src: _write(src / "os-support.yaml", "AMD Radeon:\n  RX 1: {Ubuntu: x}\n"),
        ["source os_support (", "AMD Radeon/RX 1/Ubuntu is a str, not a mapping"],
    ),
    "schema is a list": (
        lambda src: _write(src / "gpus.schema.yaml", "- 1\n"),
        ["source gpus_schema (", "gpus.schema.yaml): the schema is a list", "expected the JSON"],
    ),
    "gpus.yaml bad YAML": (
        lambda src: _write(src / "gpus.yaml", "a: [1,\n"),
        ["source gpus (", "gpus.yaml): not valid YAML", "(line "],
    ),
    "matrix without table": (
        lambda src: _write(src / "compatibility-matrix.rst", "just prose\n"),
        ["source matrix (", "no 'ROCm Version' table", "expected a compatibility matrix"],
    ),
    "sysreq without table": (
        lambda src: _write(src / "sysreq-linux.rst", "just prose\n"),
        ["source sysreq_linux (", "no GPU table", "expected a system-requirements page"],
    ),
    "local copy not UTF-8": (
        lambda src: (src / "versions.rst").write_bytes(b"\xff\xfe"),
        ["source versions: ", "versions.rst is not UTF-8 text"],
    ),
    "recipe is a list": (
        lambda src: _write(src / "recipe.yaml", "- 1\n"),
        ["recipe ", "recipe.yaml: the recipe is a list"],
    ),
    "recipe is empty": (
        lambda src: _write(src / "recipe.yaml", ""),
        ["recipe ", "the recipe is a NoneType"],
    ),
    "recipe entry without format": (
        lambda src: _write(
            src / "recipe.yaml",
            (src / "recipe.yaml").read_text(encoding="utf-8").replace("format: sysreq", "x: 1"),
        ),
        ["format is one of gpus_yaml, sysreq, compat_matrix", "unknown key 'x'"],
    ),
    "recipe series as a number": (
        lambda src: _write(
            src / "recipe.yaml",
            (src / "recipe.yaml").read_text(encoding="utf-8").replace('"7.2"', "7.20"),
        ),
        ["series must be a quoted string, not 7.2"],
    ),
    "pins is text": (
        lambda src: _write(src / "sources.yaml", "hello\n"),
        ["pins file ", "sources.yaml is not a mapping of source key -> pin"],
    ),
    "pin lacks url": (
        lambda src: _write(src / "sources.yaml", "versions: {what: x, file: versions.rst}\n"),
        ["sources.yaml: source 'versions' needs url"],
    ),
    "pci.ids without AMD": (
        lambda src: _write(src / "pci.ids.1002", "# header\n1001  Other\n\t0001  x\n"),
        ["source pciids (", "nothing found", "expected pci.ids with a '1002"],
    ),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_bad_input_is_one_clean_error_naming_the_file(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "compat", src)
    for path in (SAMPLES / "pci").iterdir():
        shutil.copy(path, src / path.name)
    pci_pins = yaml.safe_load((SCRIPTS / "datagen" / pci.PINS).read_text(encoding="utf-8"))
    for pin in pci_pins.values():
        for field in ("sha256", "bytes", "excerpt"):
            pin.pop(field, None)
    _write(src / "sources_pci.yaml", yaml.safe_dump(pci_pins))
    breaker, wanted = BREAKS[case]
    breaker(src)
    assert generate_data.main(_args(tmp_path)) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for part in wanted:
        assert part in err, (part, err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "docs").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "compat", src)
    _write(src / "gpus.yaml", "- 1\n")
    with pytest.raises(common.DataError, match="the product list is a list"):
        generate_data.main([*_args(tmp_path), "--skip-pci", "--debug"])


# --------------------------------------------------------------------------------------------
# 4. no FIFO, device or oversized file is read
# --------------------------------------------------------------------------------------------


def test_read_bytes_refuses_what_is_not_a_regular_file_and_bounds_the_rest(
    tmp_path: Path,
) -> None:
    with pytest.raises(common.DataError, match="is a folder"):
        common.read_bytes(tmp_path, "input")
    if Path("/dev/zero").exists():
        link = tmp_path / "zero"
        link.symlink_to("/dev/zero")
        with pytest.raises(common.DataError, match="is a character device"):
            common.read_bytes(link, "input")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(common.DataError, match="larger than"):
        common.read_bytes(big, "input", limit=10)
    assert common.read_bytes(big, "input", limit=11) == b"x" * 11
    with pytest.raises(FileNotFoundError):
        common.read_bytes(tmp_path / "none", "input")


_SUBPROCESS = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    import generate_data
    for args in sys.argv[2:]:
        print("rc", generate_data.main(args.split("|") + ["--skip-pci"]), flush=True)
    """
)


@needs_fifo
def test_fifos_and_devices_in_place_of_inputs_are_refused_not_read(tmp_path: Path) -> None:
    """Run apart with a timeout: without the checks each of these blocks or never ends."""
    cases = []
    for name, kind in [("recipe.yaml", "fifo"), ("sources.yaml", "zero"), ("gpus.yaml", "fifo")]:
        src = tmp_path / f"{name}-{kind}"
        shutil.copytree(SAMPLES / "compat", src)
        (src / name).unlink()
        if kind == "fifo":
            os.mkfifo(src / name)
        else:
            (src / name).symlink_to("/dev/zero")
        cases.append(
            "|".join(
                [
                    *("--sources", str(src), "--recipe", str(src / "recipe.yaml")),
                    *("--pins", str(src / "sources.yaml"), "--out", str(src / "out")),
                    *("--docs", str(src / "docs")),
                ]
            )
        )
    done = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS, str(SCRIPTS), *cases],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.stdout.split() == ["rc", "2"] * 3, done.stderr
    errors = done.stderr.strip().splitlines()
    assert "recipe.yaml is a FIFO, not a regular file" in errors[0]
    assert "sources.yaml is a character device, not a regular file" in errors[1]
    assert "gpus.yaml is a FIFO, not a regular file: re-fetch with" in errors[2]
    assert "Traceback" not in done.stderr
