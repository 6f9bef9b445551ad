"""The health report's privacy (user names, host name, secrets) and its escaping."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from rocmpanel.shell.report import EnvLine, GpuLine, HealthReport, env_lines
from rocmpanel.shell.report_redact import HOST, SECRET, USER, Redactor, redact
from rocmpanel.shell.report_render import md_escape, to_html, to_markdown

ENV = {
    "USER": "alicebob",
    "HOME": "/home/alicebob",
    "HOSTNAME": "forge-7.lab.example",
    "MY_API_KEY": "sk-0123456789abcdef",
    "DB_PASSWORD": "hunter2hunter2",
}


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


@pytest.fixture
def redactor() -> Redactor:
    return Redactor.for_this_machine(environ=ENV)


def test_home_becomes_tilde_and_other_homes_lose_their_names(redactor: Redactor) -> None:
    text = redactor.text(
        "/home/alicebob/envs/rocm7/bin/python and /home/carol/x and C:\\Users\\Dave\\AppData"
        " and /Users/erin/lib"
    )
    assert text == (
        f"~/envs/rocm7/bin/python and /home/{USER}/x and C:\\Users\\{USER}\\AppData"
        f" and /Users/{USER}/lib"
    )


def test_the_user_name_goes_wherever_it_stands_as_a_word(redactor: Redactor) -> None:
    assert redactor.text("owner alicebob; group alicebob-dev") == f"owner {USER}; group {USER}-dev"
    # A longer word that contains the name is another word.
    assert redactor.text("alicebobby") == "alicebobby"


def test_the_host_name_and_its_short_form_go_always(redactor: Redactor) -> None:
    kept = Redactor.for_this_machine(keep_paths=True, environ=ENV)
    for r in (redactor, kept):
        assert r.text("built on forge-7.lab.example and forge-7") == f"built on {HOST} and {HOST}"


def test_keep_paths_keeps_user_names_but_never_secrets(redactor: Redactor) -> None:
    kept = Redactor.for_this_machine(keep_paths=True, environ=ENV)
    text = "/home/alicebob/x --key sk-0123456789abcdef"
    assert kept.text(text) == f"/home/alicebob/x --key {SECRET}"
    assert redactor.text(text) == f"~/x --key {SECRET}"


def test_short_and_generic_names_are_replaced_in_paths_only() -> None:
    r = Redactor.for_this_machine(environ={"USER": "al", "HOME": "/home/al"})
    assert r.text("a total of al is /home/al/x and /home/al") == "a total of al is ~/x and ~"
    root = Redactor.for_this_machine(environ={"USER": "root", "HOME": "/root"})
    assert root.text("sysfs root /root/envs") == "sysfs root ~/envs"


def test_a_whole_report_is_redacted_everywhere(redactor: Redactor) -> None:
    secret_lines = env_lines(ENV, lambda _n: False)  # nothing listed: no ROCm names
    assert secret_lines == []
    report = _report(
        system=(("Python", "/home/alicebob/.pyenv/bin/python"),),
        gpus=(GpuLine("GPU of alicebob", "gfx1100", "24 GiB", "1002:744c", "s", "d", "ok", "why"),),
        env=(EnvLine("HIP_PATH", "/home/alicebob/hip:/opt/rocm", ""),),
        workload_python="/home/alicebob/venv/bin/python",
        problems=("Settings: could not read: /home/alicebob/.config is broken on forge-7",),
    )
    for text in (to_markdown(redact(report, redactor)), to_html(redact(report, redactor))):
        assert "alicebob" not in text and "forge-7" not in text
    unredacted = to_markdown(report)
    assert "alicebob" in unredacted  # the test would fail if redaction were skipped


def test_secret_values_are_never_listed_even_with_a_rocm_name() -> None:
    lines = env_lines({"HSA_AUTH_TOKEN": "abc", "HIP_PASS": "x", "ROCM_PATH": "/opt"}, bool)
    assert {e.name: e.value for e in lines} == {
        "HSA_AUTH_TOKEN": "",
        "HIP_PASS": "",
        "ROCM_PATH": "/opt",
    }


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs


EVIL = '<script>alert("x")</script><img src=http://evil.example/a.png onerror=alert(1)>'


def test_html_escapes_every_value_and_loads_nothing() -> None:
    report = _report(
        gpus=(GpuLine(EVIL, "gfx1100", "1 GiB", "1002:744c", "s", "d", "ok", EVIL),),
        env=(EnvLine("HIP_X", EVIL, ""),),
    )
    page = to_html(report)
    parser = _Collect()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert not any(name in ("src", "href", "onerror") for name, _ in parser.attrs)
    assert html.escape(EVIL) in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_markdown_escapes_markup() -> None:
    report = _report(env=(EnvLine("HIP_X", f"a|b {EVIL} /home/{USER}", ""),))
    text = to_markdown(report)
    row = next(line for line in text.splitlines() if line.startswith("| HIP_X"))
    assert row.count(" | ") == 2  # the value's | does not split the cell
    assert "<script>" not in text and "\\<script\\>" in text
    assert "\\<user\\>" in text  # renders as <user>, not as a swallowed tag
    assert re.search(r"(?<!\\)<", text) is None
    assert md_escape("HSA_OVERRIDE_GFX_VERSION") == "HSA_OVERRIDE_GFX_VERSION"


def test_a_distributions_default_host_name_keeps_the_os_line() -> None:
    """Debian's installer names the machine "debian", Ubuntu's cloud images "ubuntu": taking
    that word out made the OS line "<host> GNU/Linux 12"."""
    r = Redactor.for_this_machine(environ={"HOSTNAME": "debian", "USER": "alicebob"})
    assert r.text("Debian GNU/Linux 12 (bookworm)") == "Debian GNU/Linux 12 (bookworm)"
    other = Redactor.for_this_machine(environ={"HOSTNAME": "forge-7", "USER": "alicebob"})
    assert other.text("Debian GNU/Linux 12 on forge-7") == f"Debian GNU/Linux 12 on {HOST}"


def test_the_user_and_password_of_a_url_are_secrets() -> None:
    """A mirror's credentials in a listed variable (HF_ENDPOINT), with and without a user."""
    for r in (
        Redactor.for_this_machine(environ=ENV),
        Redactor.for_this_machine(keep_paths=True, environ=ENV),
    ):
        text = r.text("https://bob:s3cretpw@mirror.example/x and https://ghp_abc123@github.com")
        assert text == f"https://{SECRET}@mirror.example/x and https://{SECRET}@github.com"
    report = _report(env=tuple(env_lines({"HF_ENDPOINT": "https://bob:s3cretpw@m.example"}, bool)))
    assert "s3cretpw" not in to_markdown(redact(report, Redactor.for_this_machine(environ=ENV)))


def test_a_user_named_like_a_word_of_the_report_leaves_the_text_alone() -> None:
    """USER=gpu made every "AMD GPU" read "AMD <user>"; the name still leaves the paths."""
    r = Redactor.for_this_machine(environ={"HOME": "/home/gpu", "USER": "gpu", "HOSTNAME": "rocm"})
    assert r.text("AMD GPU found; ROCm 7.2") == "AMD GPU found; ROCm 7.2"
    assert r.text("/home/gpu/envs/t1 and /home/gpu") == "~/envs/t1 and ~"
    assert r.text("/srv/home/gpu/x") == f"/srv/home/{USER}/x"
