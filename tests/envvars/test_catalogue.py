"""The environment catalogue: every variable the issue lists, and the value checks."""

from __future__ import annotations

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.envvars.catalogue import (
    Status,
    gfx_target_for_override,
    load_catalogue,
    parse_catalogue,
)

REQUIRED = (
    "HSA_OVERRIDE_GFX_VERSION",
    "HSA_OVERRIDE_GFX_VERSION_1",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ROCM_PATH",
    "HIP_PATH",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_TUNABLEOP_ENABLED",
    "MIOPEN_FIND_MODE",
    "MIOPEN_USER_DB_PATH",
    "TORCH_BLAS_PREFER_HIPBLASLT",
    "HSA_ENABLE_SDMA",
    "AMD_LOG_LEVEL",
    "HIP_LAUNCH_BLOCKING",
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTORCH_ROCM_ARCH",
    "HSA_NO_SCRATCH_RECLAIM",
    "HSA_FORCE_FINE_GRAIN_PCIE",
    "NCCL_DEBUG",
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_DISABLE",
    "NCCL_P2P_DISABLE",
    "MIOPEN_DISABLE_CACHE",
    "GPU_MAX_HW_QUEUES",
    "OMP_NUM_THREADS",
)


@pytest.mark.parametrize("name", REQUIRED)
def test_every_listed_variable_is_described_and_sourced(name: str) -> None:
    catalogue = load_catalogue()
    info = catalogue.lookup(name)
    assert info is not None, name
    assert len(info.meaning) > 30
    assert info.platforms and set(info.platforms) <= {"linux", "windows"}
    assert info.reader
    assert info.sources and all(src in catalogue.sources for src in info.sources)
    assert info.status in {"official", "community", "unverified"}


def test_platform_facts() -> None:
    catalogue = load_catalogue()
    assert catalogue.lookup("HSA_OVERRIDE_GFX_VERSION").platforms == ("linux",)
    assert catalogue.lookup("HIP_PATH").platforms == ("windows",)
    assert catalogue.lookup("PATH").is_list and catalogue.lookup("LD_LIBRARY_PATH").is_list
    assert catalogue.lookup("HSA_OVERRIDE_GFX_VERSION").before_torch
    assert not catalogue.lookup("ROCM_PATH").before_torch


def test_override_11_0_is_refused_with_the_reason() -> None:
    verdict = load_catalogue().validate("HSA_OVERRIDE_GFX_VERSION", "11.0", "linux")
    assert verdict.status is Status.INVALID
    assert "MAJOR.MINOR.STEP" in verdict.message and "'11.0' has 2 parts" in verdict.message


@pytest.mark.parametrize("value", ["11", "gfx1100", "11.0.0.0", "10.3.a", " 10.3.0", "64.0.0"])
def test_malformed_overrides_are_refused(value: str) -> None:
    assert load_catalogue().validate("HSA_OVERRIDE_GFX_VERSION", value).status is Status.INVALID


@pytest.mark.parametrize(
    ("value", "gfx"), [("10.3.0", "gfx1030"), ("11.0.0", "gfx1100"), ("9.0.10", "gfx90a")]
)
def test_override_names_the_target(value: str, gfx: str) -> None:
    assert gfx_target_for_override(value) == gfx
    verdict = load_catalogue().validate("HSA_OVERRIDE_GFX_VERSION_2", value, "linux")
    assert verdict.status is Status.VALID and gfx in verdict.message


@pytest.mark.parametrize("name", ["HSA_OVERRIDE_GFX_VERSION", "ROCR_VISIBLE_DEVICES"])
def test_empty_values_are_refused_unset_instead(name: str) -> None:
    verdict = load_catalogue().validate(name, "", "linux")
    assert verdict.status is Status.INVALID and "Unset the variable instead" in verdict.message


def test_override_on_windows_is_flagged() -> None:
    verdict = load_catalogue().validate("HSA_OVERRIDE_GFX_VERSION", "11.0.0", "windows")
    assert verdict.status is Status.WARNING and "nothing on Windows" in verdict.message


@pytest.mark.parametrize(
    ("name", "value", "status"),
    [
        ("ROCR_VISIBLE_DEVICES", "0,1", Status.VALID),
        ("ROCR_VISIBLE_DEVICES", "GPU-4b2c", Status.VALID),
        ("ROCR_VISIBLE_DEVICES", "0,0", Status.INVALID),
        ("ROCR_VISIBLE_DEVICES", "0, 1", Status.INVALID),
        ("ROCR_VISIBLE_DEVICES", "-1", Status.WARNING),
        ("HIP_VISIBLE_DEVICES", "all", Status.INVALID),
        ("MIOPEN_FIND_MODE", "fast", Status.VALID),
        ("MIOPEN_FIND_MODE", "QUICK", Status.INVALID),
        ("PYTORCH_TUNABLEOP_ENABLED", "true", Status.INVALID),
        ("AMD_LOG_LEVEL", "3", Status.VALID),
        ("AMD_LOG_LEVEL", "6", Status.INVALID),
        ("FLASH_ATTENTION_TRITON_AMD_ENABLE", "1", Status.INVALID),
        (
            "PYTORCH_ALLOC_CONF",
            "garbage_collection_threshold:0.8,max_split_size_mb:512",
            Status.VALID,
        ),
        ("PYTORCH_ALLOC_CONF", "max_split_size_mb:10", Status.INVALID),
        ("PYTORCH_ALLOC_CONF", "expandable_segments:True", Status.WARNING),
        ("PYTORCH_HIP_ALLOC_CONF", "roundup_power2_divisions:[256:1,512:2]", Status.VALID),
        ("PYTORCH_HIP_ALLOC_CONF", "max_split_size_mb=512", Status.INVALID),
        ("PYTORCH_HIP_ALLOC_CONF", "typo_key:1", Status.WARNING),
        ("ROCM_PATH", "~/rocm", Status.INVALID),
        ("ROCM_PATH", "$HOME/rocm", Status.VALID),
        ("PATH", "/opt/rocm/bin:$PATH", Status.VALID),
        ("PATH", "/opt/rocm/bin", Status.WARNING),
        ("PATH", "/opt/rocm/bin::$PATH", Status.WARNING),
        ("SOMETHING_ELSE", "any text at all", Status.UNKNOWN),
        ("SOMETHING_ELSE", "a\nb", Status.INVALID),
        ("SOMETHING_ELSE", "$(rm -rf ~)", Status.INVALID),
        ("SOMETHING_ELSE", "`id`", Status.INVALID),
        ("SOMETHING_ELSE", "a\ud800b", Status.INVALID),
        ("SOMETHING_ELSE", "x" * 40_000, Status.INVALID),
        ("1BAD", "x", Status.INVALID),
    ],
)
def test_values(name: str, value: str, status: Status) -> None:
    assert load_catalogue().validate(name, value, "linux").status is status


def test_windows_path_lists_use_semicolons() -> None:
    verdict = load_catalogue().validate("PATH", "C:\\tools;;%USERPROFILE%\\bin", "windows")
    assert verdict.status is Status.WARNING and "empty entry" in verdict.message


def test_describe_mentions_source_and_timing() -> None:
    text = load_catalogue().describe("PYTORCH_TUNABLEOP_ENABLED")
    assert "import torch" in text and "tunable" in text
    assert "not in rocmpanel's catalogue" in load_catalogue().describe("MY_OWN_THING")


def test_damaged_catalogue_is_a_clear_error() -> None:
    with pytest.raises(PanelError, match="catalogue is damaged"):
        parse_catalogue("variables: [1, 2]")


def test_every_entry_keeps_its_sources() -> None:
    catalogue = load_catalogue()
    for info in catalogue.variables:
        assert info.sources, info.name
        assert all(key in catalogue.sources for key in info.sources), info.name


SMALL = """
sources: {s: "a source"}
variables:
  NEW_NAME:
    meaning: "Options under the new name."
    format: {kind: alloc_conf}
    torch: {from: "2.10"}
    caution: "Old names win when also set."
    src: [s]
  OLD_NAME:
    meaning: "Options under the old name."
    format: {kind: alloc_conf}
    torch: {through: "2.9"}
    src: [s]
  MIDDLE:
    meaning: "Only some releases."
    torch: {from: "2.4", through: "2.6"}
    src: [s]
  LIST:
    meaning: "A pattern-checked value."
    format: {kind: string, pattern: "[a-z]+(,[a-z]+)*", hint: "words separated by commas"}
    src: [s]
  COUNT:
    meaning: "A number without an upper bound."
    format: {kind: int, minimum: 1}
    src: [s]
"""


def test_torch_ranges_pick_the_name_per_release() -> None:
    catalogue = parse_catalogue(SMALL)
    assert catalogue.alloc_conf_name("2.9.1+rocm6.4") == "OLD_NAME"
    assert catalogue.alloc_conf_name("2.10.0") == "NEW_NAME"
    assert catalogue.alloc_conf_name("2.13.0+rocm7.2") == "NEW_NAME"
    assert catalogue.alloc_conf_name("nightly") is None
    middle = catalogue.lookup("MIDDLE")
    assert middle is not None
    assert [middle.recommended_for_torch(v) for v in ("2.3", "2.4.1", "2.6.0", "2.7")] == [
        False,
        True,
        True,
        False,
    ]
    assert middle.torch_note() == "use it with torch 2.4 to 2.6"
    list_info = catalogue.lookup("LIST")
    assert list_info is not None and not list_info.recommended_for_torch("2.10")


def test_caution_and_torch_range_appear_in_the_description() -> None:
    text = parse_catalogue(SMALL).describe("NEW_NAME")
    assert "Caution: Old names win when also set." in text
    assert "use it with torch 2.10 and later" in text


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("abc", Status.VALID),
        ("abc,de", Status.VALID),
        ("abc,", Status.INVALID),
        ("", Status.INVALID),
    ],
)
def test_pattern_is_checked_on_the_whole_value(value: str, status: Status) -> None:
    verdict = parse_catalogue(SMALL).validate("LIST", value, "linux")
    assert verdict.status is status
    if status is Status.INVALID:
        assert "words separated by commas" in verdict.message


def test_open_ended_int_hint() -> None:
    info = parse_catalogue(SMALL).lookup("COUNT")
    assert info is not None and info.format_hint() == "a whole number, at least 1"


@pytest.mark.parametrize(
    "broken",
    [
        SMALL.replace('from: "2.10"', 'from: "2.x"'),
        SMALL.replace('pattern: "[a-z]+(,[a-z]+)*"', 'pattern: "[a-z"'),
        SMALL.replace('torch: {through: "2.9"}', "torch: [2.9]"),
    ],
)
def test_bad_new_fields_are_a_damaged_catalogue(broken: str) -> None:
    with pytest.raises(PanelError, match="catalogue is damaged"):
        parse_catalogue(broken)
