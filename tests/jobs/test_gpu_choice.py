"""The GPU choice: by PCI address, in the runtime's order, into the visibility variables;
the integrated GPU left out by default; the job environment gets it (a choice the user
made wins over visibility variables already set, the default yields to them)."""

from __future__ import annotations

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.jobs import gpu_choice
from rocmpanel.jobs.gpu_choice import (
    MEANINGS,
    choose,
    normalize_bdf,
    parse_gpus_option,
    resolve,
    runtime_gpus,
    saved_text,
    saved_wanted,
)
from rocmpanel.jobs.job_env import job_env_for
from rocmpanel.jobs.spec import GPUS_VAR, JobSpec

DGPU, IGPU, DGPU2 = "0000:03:00.0", "0000:73:00.0", "0000:0c:00.0"


@pytest.fixture
def igpu_last(tmp_path, kfd):
    """A discrete card and, after it in KFD order, an integrated GPU."""
    return runtime_gpus(kfd.kfd_tree(tmp_path, kfd.RX7900XTX, kfd.RAPHAEL_IGPU))


@pytest.fixture
def igpu_first(tmp_path, kfd):
    """The integrated GPU first in KFD order, then two discrete cards."""
    return runtime_gpus(kfd.kfd_tree(tmp_path, kfd.RAPHAEL_IGPU, kfd.RX7900XTX, kfd.RX6900XT))


def test_runtime_gpus_in_kfd_order_named_from_the_pci_table(igpu_first) -> None:
    assert [g.bdf for g in igpu_first] == [IGPU, DGPU, DGPU2]
    assert [g.integrated for g in igpu_first] == [True, False, False]
    assert "7900" in igpu_first[1].name and igpu_first[1].gfx == "gfx1100"
    assert igpu_first[1].vram_bytes == 24 << 30


def test_no_kfd_no_gpus(tmp_path) -> None:
    assert runtime_gpus(tmp_path) == ()
    choice = choose((), None, "linux")
    assert (choice.count, choice.env, choice.label) == (0, {}, "no AMD GPU")


def test_default_leaves_the_integrated_gpu_out_by_its_runtime_index(igpu_first) -> None:
    choice = choose(igpu_first, None, "linux")
    assert [g.bdf for g in choice.gpus] == [DGPU, DGPU2]
    assert choice.indices == (1, 2)
    # ROCr's indices; HIP's and CUDA's would count within the filtered list: removed.
    assert choice.env == {"ROCR_VISIBLE_DEVICES": "1,2", "HIP_VISIBLE_DEVICES": None,
                          "CUDA_VISIBLE_DEVICES": None}  # fmt: skip
    assert not choice.explicit
    assert any("Left out by default" in note and "610M" in note for note in choice.notes)


def test_default_with_only_discrete_gpus_sets_nothing(tmp_path, kfd) -> None:
    gpus = runtime_gpus(kfd.kfd_tree(tmp_path, kfd.RX7900XTX, kfd.RX6900XT))
    choice = choose(gpus, None, "linux")
    assert choice.count == 2 and choice.env == {} and choice.label == "all 2 GPUs"


def test_a_chosen_gpu_is_addressed_by_its_index_now(igpu_first) -> None:
    choice = choose(igpu_first, (DGPU2,), "linux")
    assert choice.env["ROCR_VISIBLE_DEVICES"] == "2"
    assert choice.label == f"GPU 2 {igpu_first[2].name} ({DGPU2})"
    # The same card, now first in KFD order (another slot, another kernel): index 0.
    assert choose(igpu_first[2:], (DGPU2,), "linux").env["ROCR_VISIBLE_DEVICES"] == "0"


def test_order_follows_the_runtime_not_the_setting(igpu_first) -> None:
    choice = choose(igpu_first, (DGPU2, IGPU), "linux")
    assert choice.indices == (0, 2) and choice.env["ROCR_VISIBLE_DEVICES"] == "0,2"


def test_all_includes_the_integrated_gpu_and_says_so(igpu_last) -> None:
    choice = choose(igpu_last, (), "linux")
    assert choice.count == 2 and choice.explicit
    assert choice.env["ROCR_VISIBLE_DEVICES"] == "0,1"


def test_windows_uses_hip_visible_devices(igpu_last) -> None:
    choice = choose(igpu_last, None, "win32")
    assert choice.env == {"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": None}


def test_a_gone_gpu_is_dropped_and_said(igpu_last) -> None:
    choice = choose(igpu_last, (DGPU2,), "linux")
    assert not choice.explicit and [g.bdf for g in choice.gpus] == [DGPU]
    assert any(DGPU2 in note and "not on this machine" in note for note in choice.notes)
    partly = choose(igpu_last, (DGPU2, IGPU), "linux")
    assert partly.explicit and partly.env["ROCR_VISIBLE_DEVICES"] == "1"


def test_saved_setting_round_trip() -> None:
    assert saved_wanted("") is None and saved_text(None) == ""
    assert saved_wanted(" ALL ") == () and saved_text(()) == "all"
    assert saved_wanted("03:00.0, 0000:0C:00.0") == (DGPU, DGPU2)
    assert saved_text((DGPU, DGPU2)) == f"{DGPU},{DGPU2}"
    assert saved_wanted("garbage,,") is None  # nothing usable: the default
    assert normalize_bdf("0000:03:00.8") is None


def test_gpus_option(igpu_first) -> None:
    assert parse_gpus_option("all", igpu_first) == ()
    assert parse_gpus_option("2,1,2", igpu_first) == (DGPU2, DGPU)
    assert parse_gpus_option("0C:00.0", igpu_first) == (DGPU2,)
    with pytest.raises(PanelError, match="there is no GPU 3; this machine has 3 \\(0-2\\)"):
        parse_gpus_option("3", igpu_first)
    with pytest.raises(PanelError, match=r"'0000:99:00\.0' is not a GPU of this machine"):
        parse_gpus_option("0000:99:00.0", igpu_first)
    with pytest.raises(PanelError, match="no AMD GPU is visible"):
        parse_gpus_option("0", ())
    with pytest.raises(PanelError, match="name at least one GPU"):
        parse_gpus_option(",", igpu_first)


def test_every_variable_set_is_explained() -> None:
    assert set(MEANINGS) == set(gpu_choice.VISIBILITY_VARS)
    assert all(text.endswith(".") and text.count(". ") == 0 for text in MEANINGS.values())


def test_resolve_reads_the_settings_only_with_gpus(tmp_path, monkeypatch, kfd) -> None:
    read: list[int] = []
    monkeypatch.setattr(gpu_choice, "_saved_setting", lambda: read.append(1) or DGPU2)
    monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(tmp_path / "empty"))
    assert resolve().count == 0 and read == []
    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RX6900XT)
    monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(root))
    assert resolve().env["ROCR_VISIBLE_DEVICES"] == "1" and read == [1]
    assert resolve((DGPU,)).env["ROCR_VISIBLE_DEVICES"] == "0"  # a job's own choice wins


# --- the job environment ---------------------------------------------------------------


def _env(choice: gpu_choice.GpuChoice, **extra: str | None) -> dict[str, str | None]:
    return job_env_for(JobSpec("x", "probe", env=extra), platform="linux", active="", gpus=choice)


def test_the_job_gets_the_choice_and_its_label(igpu_last, monkeypatch) -> None:
    for name in gpu_choice.VISIBILITY_VARS:
        monkeypatch.delenv(name, raising=False)
    env = _env(choose(igpu_last, None, "linux"))
    assert env["ROCR_VISIBLE_DEVICES"] == "0" and env["HIP_VISIBLE_DEVICES"] is None
    assert env[GPUS_VAR].startswith("GPU 0 ") and DGPU in env[GPUS_VAR]


def test_the_default_yields_to_a_variable_the_user_set(igpu_last, monkeypatch) -> None:
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    env = _env(choose(igpu_last, None, "linux"))
    assert "ROCR_VISIBLE_DEVICES" not in env and "HIP_VISIBLE_DEVICES" not in env
    assert env[GPUS_VAR] == "the GPUs HIP_VISIBLE_DEVICES=1 leaves visible"


def test_a_choice_the_user_made_wins_over_a_variable_already_set(igpu_last, monkeypatch) -> None:
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    env = _env(choose(igpu_last, (IGPU,), "linux"))
    assert env["ROCR_VISIBLE_DEVICES"] == "1" and env["HIP_VISIBLE_DEVICES"] is None


def test_the_jobs_own_env_still_wins(igpu_last) -> None:
    env = _env(choose(igpu_last, (IGPU,), "linux"), ROCR_VISIBLE_DEVICES="0")
    assert env["ROCR_VISIBLE_DEVICES"] == "0"


def test_no_gpu_adds_nothing() -> None:
    assert _env(choose((), None, "linux")) == {}


# --- the commands ------------------------------------------------------------------------

JOB_COMMANDS = (
    ("probe",),
    ("torch", "validate"),
    ("bench", "none", "none"),
    ("chat", "--model", "."),
    ("serve", "--model", "."),
    ("collective",),
    ("launch", "torchrun", "train.py"),
)


@pytest.mark.parametrize("command", JOB_COMMANDS, ids=" ".join)
def test_every_job_command_takes_gpus(command, tmp_path, monkeypatch, capsys, kfd) -> None:
    from rocmpanel.shell.cli import main

    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RX6900XT)
    monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(root))
    with pytest.raises(SystemExit) as ended:
        main([*command, "--gpus", "2"])
    assert ended.value.code == 2
    assert "argument --gpus: there is no GPU 2; this machine has 2 (0-1)" in capsys.readouterr().err


def test_probe_says_where_it_runs(tmp_path, monkeypatch, capsys, kfd) -> None:
    import sys

    from rocmpanel.shell.cli import main

    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RX6900XT)
    monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(root))
    main(["probe", "--python", sys.executable, "--gpus", "0000:0c:00.0"])
    err = capsys.readouterr().err
    assert "rocmpanel probe: runs on GPU 1 AMD Radeon RX 6800" in err and "(0000:0c:00.0)." in err


def test_a_saved_choice_that_is_gone_or_garbled_is_said(tmp_path, monkeypatch, capsys, kfd) -> None:
    import sys

    from rocmpanel.base.settings import Settings
    from rocmpanel.shell.cli import main

    root = kfd.kfd_tree(tmp_path / "sys", kfd.RX7900XTX, kfd.RX6900XT)
    monkeypatch.setenv(gpu_choice.SYSFS_ROOT_VARIABLE, str(root))
    settings = Settings.load()
    settings.general.job_gpus = "0000:99:00.0,zz"
    settings.save()
    choice = resolve()
    assert choice.label == "all 2 GPUs"  # the default: nothing chosen is here
    assert choice.notes[0] == (
        "The saved GPU choice has entries that are not PCI addresses ('zz'): ignored."
    )
    assert "0000:99:00.0 is not on this machine now" in choice.notes[1]
    main(["probe", "--python", sys.executable])
    err = capsys.readouterr().err
    assert "rocmpanel probe: runs on all 2 GPUs.\n" in err
    assert "rocmpanel probe: The saved GPU choice has entries" in err
    assert "None of the chosen GPUs is here: jobs use the default." in err


def test_windows_counts_in_hips_order_not_windows_list() -> None:
    # Windows' list of video cards: the integrated GPU first, then two cards in the order
    # CIM gives; HIP numbers only the two cards, and in its own order.
    from rocmpanel.machine.gpu_model import GpuInfo

    igpu = GpuInfo("AMD Radeon(TM) Graphics", integrated=True, bdf="0000:75:00.0")
    xtx = GpuInfo("Radeon RX 7900 XTX", bdf="0000:03:00.0", hip_index=1)
    r7600 = GpuInfo("Radeon RX 7600", bdf="0000:08:00.0", hip_index=0)
    choice = resolve(("0000:08:00.0",), platform="win32", known=(igpu, xtx, r7600))
    assert choice.env == {"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": None}
    assert (
        resolve(("0000:03:00.0",), platform="win32", known=(igpu, xtx, r7600)).env[
            "HIP_VISIBLE_DEVICES"
        ]
        == "1"
    )
    # Without hipInfo there are no HIP numbers: nothing is set, and the note says why.
    plain = [GpuInfo(g.name, bdf=g.bdf, integrated=g.integrated) for g in (igpu, xtx, r7600)]
    unnumbered = resolve(None, platform="win32", known=plain, saved="")
    assert unnumbered.env == {} and unnumbered.notes == (gpu_choice.NO_HIPINFO,)


def test_hipinfo_device_numbers_are_kept() -> None:
    from rocmpanel.machine.windows_gpu import parse_hipinfo

    text = (
        "device#                           0\nName:                             Radeon RX 7600\n"
        "gcnArchName:                      gfx1102\n"
        "device#  1\nName:  Radeon RX 7900 XTX\n"
        "gcnArchName:                      gfx1100\n"
    )
    assert [(g.name, g.hip_index) for g in parse_hipinfo(text)] == [
        ("Radeon RX 7600", 0),
        ("Radeon RX 7900 XTX", 1),
    ]
