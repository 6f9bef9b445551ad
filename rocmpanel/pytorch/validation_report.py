"""Validation runs as text: cause/fix per failed check, Markdown export, two runs compared."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from rocmpanel.base.enums import CheckStatus
from rocmpanel.knowledge.torch_builds import Override
from rocmpanel.pytorch.explanations import Fix, explain
from rocmpanel.pytorch.validation_run import COMPLETED, NO_PRESET, CheckResult, ValidationRun

STATUS_MARK = {
    CheckStatus.PASS: "PASS",
    CheckStatus.WARN: "WARN",
    CheckStatus.FAIL: "FAIL",
    CheckStatus.SKIP: "skip",
}


def fix_for(
    run: ValidationRun, check: CheckResult, overrides: Mapping[str, Override] | None = None
) -> Fix | None:
    """The likely cause and fix of a failed check (None for passes, skips and unknowns)."""
    if check.status is not CheckStatus.FAIL:
        return None
    override = (overrides or {}).get(run.gfx or "")
    return explain(
        check.fix_id, check.error or check.detail, gfx=run.gfx, override=override, os_name=run.os
    )


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def counts_text(run: ValidationRun) -> str:
    """``3 pass, 1 fail, 12 skip`` (and the warnings, when there are any)."""
    counts = run.counts
    warn = f", {counts[CheckStatus.WARN]} warn" if counts[CheckStatus.WARN] else ""
    return (
        f"{counts[CheckStatus.PASS]} pass, {counts[CheckStatus.FAIL]} fail{warn}, "
        f"{counts[CheckStatus.SKIP]} skip"
    )


def damaged_text(run: ValidationRun) -> str:
    """What a stored run that cannot be read back gets instead of its report."""
    return (
        f"Validation run #{run.id or '-'} is damaged ({run.damaged}), so it cannot be shown. "
        "Delete it in the PyTorch tab's run history."
    )


def _title(run: ValidationRun) -> str:
    if run.damaged is not None:
        return f"#{run.id or '-'} damaged run: {run.damaged}"
    where = run.env_name or run.python
    return f"#{run.id or '-'} {_when(run.created_at)} {where}: {counts_text(run)}"


def run_title(run: ValidationRun) -> str:
    """One line for a run (history list, ``torch history``); names its preset, if any."""
    title = _title(run)
    if run.damaged is not None or run.preset == NO_PRESET:
        return title
    return f"{title} (preset {run.preset})"


def to_markdown(run: ValidationRun, overrides: Mapping[str, Override] | None = None) -> str:
    """A run as a Markdown report a user can paste into an issue."""
    if run.damaged is not None:
        return f"# PyTorch validation #{run.id or '-'}\n\n{damaged_text(run)}\n"
    lines = [
        f"# PyTorch validation {_when(run.created_at)}",
        "",
        f"- Python: `{run.python}`" + (f" (environment {run.env_name})" if run.env_name else ""),
        f"- torch: {run.torch_version or 'n/a'} ({run.build or 'n/a'} build)",
        f"- GPU: {run.device_name or 'n/a'}; detected gfx {run.gfx or 'n/a'}; "
        f"device reports {run.gcn_arch or 'n/a'}",
        f"- Tuning preset: {run.preset}",
        f"- Result: {counts_text(run)}"
        + ("" if run.outcome == COMPLETED else f" (ended early: {run.outcome})"),
        "",
        "| Check | Status | Figure |",
        "| --- | --- | --- |",
    ]
    lines += [
        f"| {_cell(c.name)} | {STATUS_MARK[c.status]} | {_cell(c.figure)} |" for c in run.checks
    ]
    fixes = [(c, fix_for(run, c, overrides)) for c in run.checks if c.status is CheckStatus.FAIL]
    if fixes:
        lines += ["", "## Failures", ""]
        for check, fix in fixes:
            lines.append(f"### {check.name}")
            if check.error:
                lines += ["", "```", check.error.strip()[:2000], "```"]
            if fix is not None:
                lines += ["", f"- Likely cause: {fix.cause}", f"- Fix: {fix.fix}"]
            else:
                lines += ["", "- Not a known error: see the text above."]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


@dataclass(frozen=True)
class CompareRow:
    """One check in two runs, with the change of its measured value (B vs A) when both have one."""

    check_id: str
    name: str
    a: CheckResult | None
    b: CheckResult | None
    change: float | None  # relative, e.g. 0.12 = B is 12 % higher

    @property
    def status_changed(self) -> bool:
        return (self.a.status if self.a else None) != (self.b.status if self.b else None)


def compare(a: ValidationRun, b: ValidationRun) -> list[CompareRow]:
    order: list[str] = [c.id for c in a.checks]
    order += [c.id for c in b.checks if c.id not in order]
    rows = []
    for check_id in order:
        ca, cb = a.check(check_id), b.check(check_id)
        change = None
        if (
            ca and cb and ca.value is not None and cb.value is not None
            and ca.value != 0 and ca.unit == cb.unit
        ):  # fmt: skip
            change = (cb.value - ca.value) / abs(ca.value)
        either = ca or cb
        name = either.name if either is not None else check_id
        rows.append(CompareRow(check_id, name, ca, cb, change))
    return rows


def _side(check: CheckResult | None) -> str:
    if check is None:
        return "—"
    return f"{STATUS_MARK[check.status]} {check.figure}".strip()


def compare_markdown(a: ValidationRun, b: ValidationRun) -> str:
    lines = [
        "# PyTorch validation: two runs",
        "",
        f"- A: {_title(a)} (torch {a.torch_version or 'n/a'}, {a.device_name or 'no GPU'}, "
        f"preset: {a.preset})",
        f"- B: {_title(b)} (torch {b.torch_version or 'n/a'}, {b.device_name or 'no GPU'}, "
        f"preset: {b.preset})",
        "",
        "| Check | A | B | Change |",
        "| --- | --- | --- | --- |",
    ]
    for row in compare(a, b):
        change = f"{row.change:+.1%}" if row.change is not None else ""
        lines.append(
            f"| {_cell(row.name)} | {_cell(_side(row.a))} | {_cell(_side(row.b))} | {change} |"
        )
    return "\n".join(lines) + "\n"
