"""The health report as Markdown (forums, issues) and as one self-contained HTML page.

Both come from one list of blocks (:func:`blocks`): headings, lines of text, bullet lists
and tables, so the two formats always say the same. Every text from the machine (a GPU
name, a variable's value) is escaped for its format: in Markdown the characters that would
make markup (``<user>`` would vanish as an HTML tag on GitHub, a ``|`` would split a table
cell), in HTML everything through :func:`html.escape`. The HTML page has no script, loads
nothing (a Content-Security-Policy says so to the browser) and carries its own style.
Redaction happens before: :func:`rocmpanel.shell.report_redact.redact`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from rocmpanel import __version__
from rocmpanel.shell.report import HealthReport

TITLE = "rocmpanel health report"
DEMO_BANNER = "DEMO: this report describes rocmpanel's recorded demo GPUs, not a real machine."
RECORDED_BANNER = (
    "Recorded /sys tree (ROCMPANEL_SYSFS_ROOT): the GPUs are a captured machine's, "
    "not this machine's live ones."
)


@dataclass(frozen=True)
class Heading:
    text: str


@dataclass(frozen=True)
class Text:
    text: str
    strong: bool = False


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


Block = Heading | Text | Bullets | Table


def blocks(report: HealthReport) -> list[Block]:
    """The report's content in order, independent of the format."""
    out: list[Block] = []
    if report.mode == "demo":
        out.append(Text(DEMO_BANNER, strong=True))
    elif report.mode == "recorded":
        out.append(Text(RECORDED_BANNER, strong=True))
    out.append(Text(f"Generated {report.generated} by rocmpanel {__version__}."))
    out += [Heading("System"), Bullets(tuple(f"{k}: {v}" for k, v in report.system))]
    out.append(Heading("GPUs"))
    if report.gpus:
        out.append(
            Table(
                ("GPU", "gfx", "VRAM", "PCI id", "slot", "kind", "verdict"),
                tuple(
                    (g.name, g.gfx, g.vram, g.pci_id, g.slot, g.kind, g.verdict)
                    for g in report.gpus
                ),
            )
        )
        notes = [f"{g.name}: {g.reason}" for g in report.gpus]
        notes += [f"{g.name}: {a}" for g in report.gpus for a in g.advice]
        out.append(Bullets(tuple(notes + list(report.gpu_notes))))
    else:
        out.append(Text("No AMD GPU found."))
        if report.gpu_notes:
            out.append(Bullets(report.gpu_notes))
    out.append(Heading("Checklist"))
    if report.checks:
        rows = tuple(
            (c.title, c.status, c.message + (f" Fix: {c.fix}" if c.fix else ""))
            for c in report.checks
        )
        out.append(Table(("check", "status", "details"), rows))
    else:
        out.append(Text("Not checked (the GPUs could not be detected)."))
    out.append(Heading("Environment variables"))
    if report.env:
        rows = tuple((e.name, e.value, e.note) for e in report.env)
        out.append(Table(("variable", "value", "note"), rows))
    elif report.demo:
        out.append(Text("Not part of the demo: this machine's variables are not listed."))
    else:
        out.append(Text("None of the ROCm, HIP, HSA, PyTorch or PATH-like variables is set."))
    out += _telemetry(report)
    out += _validation(report)
    out += _environments(report)
    if report.problems or report.left_out:
        out += [Heading("Not in this report"), Bullets(report.problems + report.left_out)]
    return out


def _telemetry(report: HealthReport) -> list[Block]:
    peaks = report.telemetry
    if peaks is None:
        return [Heading("Recent telemetry peaks"), Text(report.telemetry_note)]
    out: list[Block] = [Heading(f"Recent telemetry peaks ({peaks.window})")]
    if peaks.gpus:
        out.append(
            Table(
                ("GPU", "samples", "busy", "VRAM used", "edge", "junction", "memory", "power"),
                tuple(
                    (
                        g.name,
                        str(g.samples),
                        g.busy,
                        g.vram,
                        g.temp_edge,
                        g.temp_junction,
                        g.temp_mem,
                        g.power,
                    )
                    for g in peaks.gpus
                ),
            )
        )
    if peaks.host:
        out.append(Text(peaks.host))
    return out


def _validation(report: HealthReport) -> list[Block]:
    run = report.validation
    if run is None:
        return [Heading("Last validation run"), Text("No validation run saved.")]
    out: list[Block] = [Heading(f"Last validation run: {run.title}")]
    if run.facts:
        out.append(Bullets(run.facts))
    if run.checks:
        out.append(Table(("check", "status", "figure"), run.checks))
    if run.left_out:
        out.append(Text(f"{run.left_out} more checks left out."))
    return out


def _environments(report: HealthReport) -> list[Block]:
    out: list[Block] = [Heading("Managed PyTorch environments")]
    if report.workload_python:
        out.append(Text(f"Workload Python: {report.workload_python}"))
    if not report.environments:
        out.append(Text("None installed by rocmpanel."))
        return out
    rows = tuple(
        (
            e.name + (" (active)" if e.active else ""),
            e.torch,
            e.build,
            e.created,
            f"damaged: {e.problem}" if e.problem else e.python,
        )
        for e in report.environments
    )
    out.append(Table(("name", "torch", "build", "created", "Python / problem"), rows))
    return out


# -- Markdown ---------------------------------------------------------------------------

# Not "_": CommonMark never makes emphasis inside a word, and HSA_OVERRIDE_GFX_VERSION
# must stay readable in the raw text too.
_MD_SPECIAL = re.compile(r"([\\`*<>|\[\]])")


def md_escape(text: str) -> str:
    """``text`` as literal Markdown text, on one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def to_markdown(report: HealthReport) -> str:
    """The report as Markdown."""
    lines = [f"## {TITLE}", ""]
    for block in blocks(report):
        if isinstance(block, Heading):
            lines += [f"### {md_escape(block.text)}", ""]
        elif isinstance(block, Text):
            text = md_escape(block.text)
            lines += [f"**{text}**" if block.strong else text, ""]
        elif isinstance(block, Bullets):
            lines += [*(f"- {md_escape(item)}" for item in block.items), ""]
        else:
            lines.append("| " + " | ".join(md_escape(h) for h in block.headers) + " |")
            lines.append("|" + " --- |" * len(block.headers))
            lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in block.rows]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# -- HTML -------------------------------------------------------------------------------

_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eee; }
.banner { background: #fff3cd; border: 1px solid #e0b000; padding: 6px 10px; font-weight: bold; }
"""


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def to_html(report: HealthReport) -> str:
    """The report as one HTML page: no script, nothing loaded from anywhere."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{_h(TITLE)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_h(TITLE)}</h1>",
    ]
    for block in blocks(report):
        if isinstance(block, Heading):
            parts.append(f"<h2>{_h(block.text)}</h2>")
        elif isinstance(block, Text):
            css = ' class="banner"' if block.strong else ""
            parts.append(f"<p{css}>{_h(block.text)}</p>")
        elif isinstance(block, Bullets):
            parts.append("<ul>" + "".join(f"<li>{_h(i)}</li>" for i in block.items) + "</ul>")
        else:
            head = "".join(f"<th>{_h(h)}</th>" for h in block.headers)
            body = "".join(
                "<tr>" + "".join(f"<td>{_h(c)}</td>" for c in row) + "</tr>" for row in block.rows
            )
            parts.append(
                f'<table border="1" cellspacing="0" cellpadding="3"><tr>{head}</tr>{body}</table>'
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def render(report: HealthReport, fmt: str) -> str:
    """``fmt``: "html" or "md"."""
    return to_html(report) if fmt == "html" else to_markdown(report)
