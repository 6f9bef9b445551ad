"""Gaps found by mutating the health report's modules: each test fails on a one-line break
that the other report tests let through (privacy on Windows and in containers, Markdown
tables that GitHub would split, sections and notes the renderers must keep)."""

from __future__ import annotations

import getpass
import re

import pytest

from rocmpanel.shell import report as report_mod
from rocmpanel.shell.cli import main
from rocmpanel.shell.report import CheckLine, EnvLine, GpuLine, HealthReport, env_lines
from rocmpanel.shell.report_redact import SECRET, USER, Redactor
from rocmpanel.shell.report_render import md_escape, to_html, to_markdown


def _report(**kw: object) -> HealthReport:
    fields: dict[str, object] = {
        "generated": "2026-01-01 00:00 UTC",
        "mode": "live",
        "system": (("OS", "linux"),),
        "gpus": (),
        "gpu_notes": (),
        "checks": (),
        "env": (),
        "validation": None,
        "telemetry": None,
        "telemetry_note": "none",
        "environments": (),
        "workload_python": "",
    }
    fields.update(kw)
    return HealthReport(**fields)  # type: ignore[arg-type]


def test_windows_user_and_home_are_taken_out() -> None:
    """Windows sets USERNAME and USERPROFILE, not USER and HOME."""
    r = Redactor.for_this_machine(
        environ={"USERNAME": "alicebob", "USERPROFILE": "C:\\Users\\alicebob"}
    )
    assert r.text("C:\\Users\\alicebob\\envs\\x by alicebob") == f"~\\envs\\x by {USER}"
    # A lower-case drive path (typed by hand, or from a tool) loses its name too.
    assert r.text("c:\\users\\carol\\x") == f"c:\\users\\{USER}\\x"


def test_a_user_known_only_to_the_system_is_taken_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A service or a container may set no USER variable: getpass still knows the name."""
    monkeypatch.setattr(getpass, "getuser", lambda: "alicebob")
    assert Redactor.for_this_machine(environ={}).text("owner alicebob") == f"owner {USER}"


def test_a_secret_inside_a_longer_one_leaves_nothing_of_the_longer() -> None:
    r = Redactor.for_this_machine(
        environ={"A_TOKEN": "abcdef123456", "B_TOKEN": "abcdef123456-tail-of-b"}
    )
    assert r.text("x abcdef123456-tail-of-b y") == f"x {SECRET} y"


def test_a_short_secret_does_not_eat_figures() -> None:
    r = Redactor.for_this_machine(environ={"PASS": "1"})
    assert r.text("1 GPU, 16 GiB") == "1 GPU, 16 GiB"


def test_a_user_name_inside_a_word_stays() -> None:
    r = Redactor.for_this_machine(environ={"USER": "alice"})
    assert r.text("malice by alice") == f"malice by {USER}"


def test_a_lower_case_secret_name_is_listed_without_its_value() -> None:
    lines = env_lines({"hf_token": "hf_abcdefghijkl"}, lambda _n: False, ":")
    assert lines == [EnvLine("hf_token", "", report_mod.SECRET_LEFT_OUT)]


def test_windows_path_variable_is_shortened() -> None:
    value = ";".join(f"C:\\p{i}" for i in range(20))
    (line,) = env_lines({"Path": value}, lambda _n: False, ";")
    assert line.note.startswith("shortened")


def _table_cells(row: str) -> int:
    """Cells of a Markdown table row: pipes not escaped by a backslash."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", row)) - 1


def test_markdown_tables_keep_their_cells() -> None:
    report = _report(env=(EnvLine("HIP_X", "a|b\nc d", ""), EnvLine("HIP_Y", "C:\\x\\", "")))
    lines = to_markdown(report).splitlines()
    at = lines.index("| variable | value | note |")
    header, separator, *rows = lines[at : at + 4]
    assert _table_cells(separator) == _table_cells(header) == 3
    assert [_table_cells(r) for r in rows] == [3, 3]  # | and a newline split no cell


def test_markdown_escapes_backslashes_before_a_redacted_name() -> None:
    """C:\\Users\\<user>: an unescaped backslash would escape the escape of <."""
    assert md_escape(f"C:\\Users\\{USER}") == "C:\\\\Users\\\\\\<user\\>"


def test_notes_advice_fixes_and_what_was_left_out_are_rendered() -> None:
    report = _report(
        gpus=(GpuLine("RX", "gfx1100", "24 GiB", "1", "s", "d", "ok", "why", ("set HSA_X",)),),
        checks=(CheckLine("Driver", "fail", "old.", "update it"),),
        env=(EnvLine("PATH", "/a", "shortened: first 8 of 20 entries"),),
        left_out=("7 more variables left out",),
    )
    for text in (to_markdown(report), to_html(report)):
        assert "RX: set HSA" in text and "Fix: update it" in text
        assert "shortened: first 8 of 20 entries" in text
        assert "7 more variables left out" in text


def test_the_fix_of_a_passing_check_is_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmpanel.base.enums import CheckStatus
    from rocmpanel.shell.report import _doctor_part

    class Fix:
        text = "do something"

    class Check:
        def __init__(self, status: CheckStatus) -> None:
            self.title, self.status, self.message, self.fix = "c", status, "m", Fix()

    class Doctor:
        checks = (Check(CheckStatus.PASS), Check(CheckStatus.FAIL))
        data = None

        class system:
            os, os_version, rocm_version, driver, notes = "linux", "", "", "", ()

        def gpu_rows(self) -> list[object]:
            return []

    import rocmpanel.setup.report as setup_report

    monkeypatch.setattr(setup_report, "build_report", lambda *a: Doctor())

    class Inv:
        system = host = None

    part = _doctor_part(Inv(), None, report_mod._Problems())  # type: ignore[arg-type]
    assert [c.fix for c in part.checks] == ["", "do something"]


def test_the_demo_report_reads_none_of_this_machine_s_stores(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(report_mod, "validation_summary", lambda: pytest.fail("read runs"))
    monkeypatch.setattr(report_mod, "environment_lines", lambda _p: pytest.fail("read envs"))
    monkeypatch.setattr(report_mod, "_workload_python", lambda: pytest.fail("read settings"))
    assert main(["report", "--demo", "--out", "-"]) == 0
    assert "**DEMO:" in capsys.readouterr().out
