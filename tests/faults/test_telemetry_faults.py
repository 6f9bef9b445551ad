"""Issue 12, findings 11 and 12 (telemetry's part): impossible values, control bytes and bad
arguments.

Figures no GPU can report (1e26 W, -123456 rpm, 9.5e13 GiB of VRAM held by one process)
reach neither the output nor the plots: they are null in ``telemetry --json`` with the
reason in ``"invalid"``. Raw control bytes in link, perf-level and name text are taken out.
Bad arguments of telemetry, doctor, probe and data are argparse errors (exit status 2, a
sentence on stderr, nothing on stdout), never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rocmpanel.monitor.amdsmi_source import sample_from_metrics
from rocmpanel.monitor.collector import TelemetryCollector
from rocmpanel.monitor.ranges import check_gpu
from rocmpanel.monitor.sample import GpuIdentity
from rocmpanel.monitor.sysfs_source import discover_gpus
from rocmpanel.shell.cli import main

from ..monitor.test_fdinfo import PDEV, add_process, fdinfo
from ..monitor.test_sysfs_faults import make_gpu

GIB = 1024**3


def telemetry_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], **files: str | None
) -> dict[str, Any]:
    """One ``telemetry --json`` sample of a captured tree with make_gpu's device changed."""
    root = tmp_path / "sys"
    if not root.exists():
        make_gpu(root, **files)
    proc = tmp_path / "proc"
    proc.mkdir(exist_ok=True)
    argv = ["telemetry", "--json", "--sysfs-root", str(root), "--proc-root", str(proc)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    return json.loads(out)  # type: ignore[no-any-return]


def gpu_json(tmp_path: Path, **files: str | None) -> dict[str, Any]:
    """The JSON of make_gpu's device, changed, as the collector hands it on (checked)."""
    make_gpu(tmp_path / "sys", **files)
    (gpu,) = discover_gpus(tmp_path / "sys")
    return check_gpu(gpu.read()).to_json()


def test_the_issues_impossible_gpu_values_are_null_with_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = telemetry_json(
        tmp_path,
        capsys,
        # 1e26 W in µW, as hwmon writes power
        hwmon__hwmon3__power1_input="1" + "0" * 32 + "\n",
        hwmon__hwmon3__fan1_input="-123456\n",
    )
    (gpu,) = doc["gpus"]
    assert (gpu["power_w"], gpu["fan_rpm"]) == (None, None)
    assert gpu["invalid"] == {
        "fan_rpm": "-123456 rpm is outside the physical range 0 to 30000 rpm",
        "power_w": "1e+26 W is outside the physical range 0 to 2000 W",
    }
    assert gpu["power_cap_w"] == 300.0 and gpu["busy_percent"] == 42  # the rest is kept


@pytest.mark.parametrize(
    ("name", "text", "key", "reason"),
    [
        (
            "hwmon__hwmon3__temp1_input",
            "250000\n",
            "temps_c.junction",
            "250 °C is outside the physical range -50 to 200 °C",
        ),
        (
            "hwmon__hwmon3__temp2_input",
            "-60000\n",
            "temps_c.edge",
            "-60 °C is outside the physical range -50 to 200 °C",
        ),
        (
            "hwmon__hwmon3__temp2_crit",
            "900000\n",
            "temp_crit_c.edge",
            "900 °C is outside the physical range -50 to 200 °C",
        ),
        (
            "hwmon__hwmon3__power1_cap",
            "2000001000\n",
            "power_cap_w",
            "2000 W is outside the physical range 0 to 2000 W",  # 2000.001 W, shown as %g
        ),
        (
            "pp_dpm_sclk",
            "0: 500Mhz\n1: 19000Mhz *\n",
            "sclk_mhz",
            "19000 MHz is outside the physical range 0 to 10000 MHz",
        ),
        (
            "gpu_busy_percent",
            "250\n",
            "busy_percent",
            "250 % is outside the physical range 0 to 100 %",
        ),
        (
            "mem_info_vram_used",
            str(30 * GIB) + "\n",
            "vram_used_bytes",
            "30 GiB in use is more than the total of 20 GiB",
        ),
        (
            "mem_info_vram_total",
            str(2**51) + "\n",
            "vram_total_bytes",
            "2.1e+06 GiB is more than 1 PiB",
        ),
        (
            "mem_info_gtt_used",
            str(40 * GIB) + "\n",
            "gtt_used_bytes",
            "40 GiB in use is more than the total of 31.2 GiB",
        ),
        (
            "current_link_speed",
            "999.0 GT/s PCIe\n",
            "link",
            "999 GT/s is outside the physical range 2.5 to 128 GT/s",
        ),
        (
            "current_link_width",
            "64\n",
            "link",
            "64 lanes is outside the physical range 1 to 32 lanes",
        ),
        (
            "current_link_speed",
            "fast\n",
            "link",
            "'fast x16' is not a PCIe link speed",
        ),
        (
            "hwmon__hwmon3__pwm1",
            "1000\n",
            "fan_percent",
            "392.2 % is outside the physical range 0 to 100 %",
        ),
    ],
)
def test_each_physical_range(tmp_path: Path, name: str, text: str, key: str, reason: str) -> None:
    gpu = gpu_json(tmp_path, **{name: text})
    assert gpu["invalid"] == {key: reason}
    path = key.split(".")
    value = gpu[path[0]] if len(path) == 1 else gpu[path[0]][path[1]]
    assert value is None


def test_a_vram_total_beyond_one_pib_leaves_used_checked_against_one_pib(
    tmp_path: Path,
) -> None:
    gpu = gpu_json(
        tmp_path,
        mem_info_vram_total=str(2**51) + "\n",
        mem_info_vram_used=str(2**52) + "\n",
    )
    assert (gpu["vram_total_bytes"], gpu["vram_used_bytes"]) == (None, None)
    assert gpu["invalid"]["vram_used_bytes"] == "4.19e+06 GiB in use is more than 1 PiB"


def test_values_at_the_bounds_are_kept(tmp_path: Path) -> None:
    gpu = gpu_json(
        tmp_path,
        hwmon__hwmon3__power1_input="2000000000\n",  # 2000 W exactly
        hwmon__hwmon3__fan1_input="30000\n",
        hwmon__hwmon3__temp1_input="200000\n",
        gpu_busy_percent="100\n",
        mem_info_vram_used="21458059264\n",  # all of it
        current_link_speed="128.0 GT/s PCIe\n",
        current_link_width="32\n",
    )
    assert gpu["invalid"] == {}
    assert (gpu["power_w"], gpu["fan_rpm"], gpu["temps_c"]["junction"]) == (2000.0, 30000, 200.0)
    assert (gpu["busy_percent"], gpu["vram_used_bytes"]) == (100, 21458059264)
    assert gpu["link"] == "128.0 GT/s x32"


def test_process_vram_beyond_its_gpu_is_null_with_the_reason(tmp_path: Path) -> None:
    make_gpu(tmp_path / "sys")  # 0000:03:00.0 with 20 GiB of VRAM
    proc = tmp_path / "proc"
    vram_kib = int(9.5e13 * 1024 * 1024)  # 9.5e13 GiB, as fdinfo writes it (KiB)
    add_process(proc, 100, "hog", {3: ("/dev/dri/renderD128", fdinfo(1, vram_kib=vram_kib))})
    add_process(proc, 200, "ok", {3: ("/dev/dri/renderD128", fdinfo(2, vram_kib=1024))})
    collector = TelemetryCollector(tmp_path / "sys", proc, host=False)
    try:
        sample = collector.collect()
    finally:
        collector.close()
    hog, ok = (p.to_json() for p in sample.processes)
    assert (hog["pid"], hog["pci_slot"], hog["vram_bytes"]) == (100, PDEV, None)
    assert hog["invalid"] == {"vram_bytes": "9.5e+13 GiB in use is more than the total of 20 GiB"}
    assert (ok["vram_bytes"], ok["invalid"]) == (1024 * 1024, {})


def test_control_bytes_are_taken_out_of_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "sys"
    device = make_gpu(
        root,
        current_link_speed="16.0\x1b GT/s\x07 PCIe\n",
        power_dpm_force_performance_level="\x1b[31mauto\x7f\x9b\n",
        product_name="Radeon\x1b]0;pwned\x07 RX\t7900\x00junk\n",
    )
    assert device.is_dir()
    proc = tmp_path / "proc"
    add_process(proc, 100, "evil\x1b[2J\x08name", {3: ("/dev/dri/renderD128", fdinfo(1))})
    argv = ["telemetry", "--json", "--sysfs-root", str(root), "--proc-root", str(proc)]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    (gpu,) = doc["gpus"]
    assert gpu["link"] == "16.0 GT/s x16"
    assert gpu["perf_level"] == "[31mauto"
    assert gpu["name"] == "Radeon]0;pwned RX 7900"
    assert gpu["invalid"] == {}
    (process,) = doc["processes"]
    assert process["name"] == "evil[2Jname"
    assert main(argv[:1] + argv[2:]) == 0  # the text output too
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text and "\x08" not in text
    assert "perf level [31mauto" in text and "pid 100 evil[2Jname" in text


def test_text_output_names_the_dropped_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "sys"
    make_gpu(root, hwmon__hwmon3__power1_input="1" + "0" * 32 + "\n")
    (tmp_path / "proc").mkdir()
    argv = ["telemetry", "--sysfs-root", str(root), "--proc-root", str(tmp_path / "proc")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "  power n/a / cap 300 W" in out
    assert "  no value for power_w: 1e+26 W is outside the physical range 0 to 2000 W\n" in out


def test_amdsmi_non_numbers_and_impossible_values() -> None:
    ident = GpuIdentity("0000:03:00.0", None, "0000:03:00.0", None, "GPU\x1b[1m")
    raw = sample_from_metrics(
        ident,
        {
            "gfx_activity": "nan",
            "vram_used": "inf",  # once an OverflowError in int(inf * MIB)
            "vram_total": 24576,
            "power": 1e26,
            "temp_edge": {"value": -300},
        },
    )
    assert (raw.busy_percent, raw.vram_used_bytes) == (None, None)
    sample = check_gpu(raw)
    assert (sample.power_w, sample.temp_edge_c, sample.vram_total_bytes) == (None, None, 24 * GIB)
    assert dict(sample.invalid) == {
        "power_w": "1e+26 W is outside the physical range 0 to 2000 W",
        "temps_c.edge": "-300 °C is outside the physical range -50 to 200 °C",
    }
    assert sample.identity.name == "GPU[1m"


# ---- arguments -----------------------------------------------------------------------------


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last stderr line of an argument error (exit status 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err.splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "inf"], "argument --interval: 'inf' is not a finite number"),
        (["--interval", "nan"], "argument --interval: 'nan' is not a finite number"),
        (["--interval", "-1"], "argument --interval: -1 is below the minimum 0.1"),
        (["--interval", "0"], "argument --interval: 0 is below the minimum 0.1"),
        (["--interval", "abc"], "argument --interval: 'abc' is not a number of seconds"),
        (["--interval", "1e6"], "argument --interval: 1e6 is above the maximum 86400"),
        (["--count", "-5"], "argument --count: -5 is below the minimum 0"),
        (["--count", "2.5"], "argument --count: '2.5' is not a whole number"),
        (
            ["--sysfs-root", "/nonexistent-r3"],
            "argument --sysfs-root: /nonexistent-r3 does not exist (give a /sys-like tree)",
        ),
        (
            ["--proc-root", "/dev/null"],
            "argument --proc-root: /dev/null is not a folder (give a /proc-like tree)",
        ),
    ],
)
def test_telemetry_arguments(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(["telemetry", *args], capsys) == f"rocmpanel telemetry: error: {message}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--rocm-version", "abc"],
            "argument --rocm-version: 'abc' is not a version number (expected digits and dots, "
            "such as 7.2 or 10.1.0)",
        ),
        (
            ["--rocm-version", "7.2;rm"],
            "argument --rocm-version: '7.2;rm' is not a version "
            "number (expected digits and dots, such as 7.2 or 10.1.0)",
        ),
        (
            ["--sysfs-root", "/nonexistent-r3"],
            "argument --sysfs-root: /nonexistent-r3 does not exist "
            "(give a captured /sys tree or a cardN/device folder)",
        ),
        (
            ["--os", "macos"],
            "argument --os: invalid choice: 'macos' (choose from 'linux', 'windows')",
        ),
    ],
)
def test_doctor_arguments(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(["doctor", *args], capsys) == f"rocmpanel doctor: error: {message}"


def test_doctor_with_a_good_version_still_judges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    argv = ["doctor", "--json", "--sysfs-root", str(tmp_path / "empty"), "--rocm-version", " 6.4 "]
    assert main(argv) == 1  # no GPU in an empty tree: a failed check, not a usage error
    assert json.loads(capsys.readouterr().out)["system"]["rocm_version"] == "6.4"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["update"], "update needs --from FOLDER|ZIP (a data set to install)."),
        (["show", "--from", "."], "--from goes only with 'update', not 'show'."),
        (["rollback", "--allow-older"], "--allow-older goes only with 'update', not 'rollback'."),
    ],
)
def test_data_arguments_checked_in_the_command(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["data", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"rocmpanel data: error: {message}\n"


def test_data_from_that_does_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(["data", "update", "--from", "/nonexistent-r3"], capsys) == (
        "rocmpanel data: error: argument --from: /nonexistent-r3 does not exist"
    )


@pytest.mark.skipif(not os.path.exists("/bin/false"), reason="needs /bin/false")
def test_probe_with_a_program_that_is_not_python(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--python", "/bin/false"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "rocmpanel probe: /bin/false did not run the probe: it exited with code 1 without a "
        "report. Give --python the path of a Python 3 interpreter, such as a virtual "
        "environment's bin/python.\n"
    )


def test_probe_with_a_missing_or_empty_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope" / "python")
    assert main(["probe", "--python", missing]) == 2
    out, err = capsys.readouterr()
    assert (
        out == "" and err == f"rocmpanel probe: The workload Python {missing!r} does not exist.\n"
    )
    assert main(["probe", "--python", " "]) == 2
    assert capsys.readouterr().err == (
        "rocmpanel probe: --python is empty: give the path of a Python 3 interpreter.\n"
    )


def test_probe_of_this_python_reports_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--json", "--python", sys.executable]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["python_executable"] == sys.executable and err == ""


# -- FC: break-it round 6, finding 16: text that is not UTF-8 is no reading, with the reason --
def test_a_perf_level_or_link_that_is_not_utf8_is_null_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "sys"
    device = make_gpu(root)
    (device / "power_dpm_force_performance_level").write_bytes(b"\xff\xfe\x80\n")
    (device / "current_link_speed").write_bytes(b"16.0 GT/s \xff\n")
    doc = telemetry_json(tmp_path, capsys)
    (gpu,) = doc["gpus"]
    assert (gpu["perf_level"], gpu["link"]) == (None, None)
    assert gpu["invalid"] == {
        "link": "the link is not UTF-8 text",
        "perf_level": "the perf level is not UTF-8 text",
    }
    argv = ["telemetry", "--sysfs-root", str(root), "--proc-root", str(tmp_path / "proc")]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "\ufffd" not in text and "perf level n/a" in text
