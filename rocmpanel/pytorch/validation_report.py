"""Validation runs as text: cause/fix per failed check, Markdown export, two runs compared."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.knowledge.torch_builds import Override
from rocmpanel.pytorch.explanations import Fix, explain
from rocmpanel.pytorch.validation_run import COMPLETED, NO_PRESET, CheckResult, ValidationRun

STATUS_MARK = {
    CheckStatus.PASS: QT_TRANSLATE_NOOP("validation_report", "PASS"),
    CheckStatus.WARN: QT_TRANSLATE_NOOP("validation_report", "WARN"),
    CheckStatus.FAIL: QT_TRANSLATE_NOOP("validation_report", "FAIL"),
    CheckStatus.SKIP: QT_TRANSLATE_NOOP("validation_report", "skip"),
}
# The validate worker's check names (it imports nothing of rocmpanel, so it cannot translate
# them); shown translated, stored as the worker wrote them.
CHECK_NAMES = (
    QT_TRANSLATE_NOOP("validation_report", "torch imports"),
    QT_TRANSLATE_NOOP("validation_report", "ROCm build"),
    QT_TRANSLATE_NOOP("validation_report", "GPU visible"),
    QT_TRANSLATE_NOOP("validation_report", "GPU target matches"),
    QT_TRANSLATE_NOOP("validation_report", "GEMM float32 vs CPU"),
    QT_TRANSLATE_NOOP("validation_report", "GEMM float16 vs CPU"),
    QT_TRANSLATE_NOOP("validation_report", "GEMM bfloat16 vs CPU"),
    QT_TRANSLATE_NOOP("validation_report", "SDPA (fp16)"),
    QT_TRANSLATE_NOOP("validation_report", "Large alloc/free"),
    QT_TRANSLATE_NOOP("validation_report", "Host→device copy"),
    QT_TRANSLATE_NOOP("validation_report", "Device→host copy"),
    QT_TRANSLATE_NOOP("validation_report", "Device memory bandwidth"),
    QT_TRANSLATE_NOOP("validation_report", "GEMM TFLOPS float16"),
    QT_TRANSLATE_NOOP("validation_report", "GEMM TFLOPS bfloat16"),
    QT_TRANSLATE_NOOP("validation_report", "GEMM TFLOPS float32"),
    QT_TRANSLATE_NOOP("validation_report", "VRAM: torch vs sysfs"),
    QT_TRANSLATE_NOOP("validation_report", "Suite finished"),
)
# How a run ended (ValidationRun.outcome, stored as this identifier).
OUTCOMES = {
    "completed": QT_TRANSLATE_NOOP("validation_report", "completed"),
    "cancelled": QT_TRANSLATE_NOOP("validation_report", "cancelled"),
    "crashed": QT_TRANSLATE_NOOP("validation_report", "crashed"),
    "failed": QT_TRANSLATE_NOOP("validation_report", "failed"),
    "damaged": QT_TRANSLATE_NOOP("validation_report", "damaged"),
}


def status_mark(status: CheckStatus) -> str:
    """A check's status in a word ("PASS", "skip")."""
    return translate("validation_report", STATUS_MARK[status])


def check_name(name: str) -> str:
    """A check's name as shown (translated when it is one of the suite's own)."""
    return translate("validation_report", name) if name in CHECK_NAMES else name


def outcome_text(outcome: str) -> str:
    """How a run ended, in a word (an unknown outcome as it is stored)."""
    return translate("validation_report", OUTCOMES[outcome]) if outcome in OUTCOMES else outcome


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
    warn = (
        translate("validation_report", ", {n} warn").format(n=counts[CheckStatus.WARN])
        if counts[CheckStatus.WARN]
        else ""
    )
    return translate(
        "validation_report", "{passed} pass, {failed} fail{warn}, {skipped} skip"
    ).format(
        passed=counts[CheckStatus.PASS],
        failed=counts[CheckStatus.FAIL],
        warn=warn,
        skipped=counts[CheckStatus.SKIP],
    )


def damaged_text(run: ValidationRun) -> str:
    """What a stored run that cannot be read back gets instead of its report."""
    return translate(
        "validation_report",
        "Validation run #{id} is damaged ({problem}), so it cannot be shown. "
        "Delete it in the PyTorch tab's run history.",
    ).format(id=run.id or "-", problem=run.damaged)


def _title(run: ValidationRun) -> str:
    if run.damaged is not None:
        return translate("validation_report", "#{id} damaged run: {problem}").format(
            id=run.id or "-", problem=run.damaged
        )
    where = run.env_name or run.python
    return f"#{run.id or '-'} {_when(run.created_at)} {where}: {counts_text(run)}"


def run_title(run: ValidationRun) -> str:
    """One line for a run (history list, ``torch history``); names its preset, if any."""
    title = _title(run)
    if run.damaged is not None or run.preset == NO_PRESET:
        return title
    return translate("validation_report", "{title} (preset {preset})").format(
        title=title, preset=run.preset
    )


def to_markdown(run: ValidationRun, overrides: Mapping[str, Override] | None = None) -> str:
    """A run as a Markdown report a user can paste into an issue."""
    if run.damaged is not None:
        return (
            translate("validation_report", "# PyTorch validation #{id}").format(id=run.id or "-")
            + f"\n\n{damaged_text(run)}\n"
        )
    na = translate("validation_report", "n/a")
    python = translate("validation_report", "- Python: `{python}`").format(python=run.python)
    if run.env_name:
        python += translate("validation_report", " (environment {name})").format(name=run.env_name)
    result = translate("validation_report", "- Result: {counts}").format(counts=counts_text(run))
    if run.outcome != COMPLETED:
        result += translate("validation_report", " (ended early: {outcome})").format(
            outcome=outcome_text(run.outcome)
        )
    lines = [
        translate("validation_report", "# PyTorch validation {when}").format(
            when=_when(run.created_at)
        ),
        "",
        python,
        translate("validation_report", "- torch: {torch} ({build} build)").format(
            torch=run.torch_version or na, build=run.build or na
        ),
        translate(
            "validation_report", "- GPU: {device}; detected gfx {gfx}; device reports {arch}"
        ).format(device=run.device_name or na, gfx=run.gfx or na, arch=run.gcn_arch or na),
        translate("validation_report", "- Tuning preset: {preset}").format(preset=run.preset),
        result,
        "",
        translate("validation_report", "| Check | Status | Figure |"),
        "| --- | --- | --- |",
    ]
    lines += [
        f"| {_cell(check_name(c.name))} | {status_mark(c.status)} | {_cell(c.figure)} |"
        for c in run.checks
    ]
    fixes = [(c, fix_for(run, c, overrides)) for c in run.checks if c.status is CheckStatus.FAIL]
    if fixes:
        lines += ["", translate("validation_report", "## Failures"), ""]
        for check, fix in fixes:
            lines.append(f"### {check_name(check.name)}")
            if check.error:
                lines += ["", "```", check.error.strip()[:2000], "```"]
            if fix is not None:
                lines += [
                    "",
                    translate("validation_report", "- Likely cause: {cause}").format(
                        cause=fix.cause
                    ),
                    translate("validation_report", "- Fix: {fix}").format(fix=fix.fix),
                ]
            else:
                lines += [
                    "",
                    translate("validation_report", "- Not a known error: see the text above."),
                ]
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
    return f"{status_mark(check.status)} {check.figure}".strip()


def _compared(run: ValidationRun) -> str:
    """One run's line of a comparison: its title, torch, GPU and preset."""
    return translate(
        "validation_report", "{title} (torch {torch}, {device}, preset: {preset})"
    ).format(
        title=_title(run),
        torch=run.torch_version or translate("validation_report", "n/a"),
        device=run.device_name or translate("validation_report", "no GPU"),
        preset=run.preset,
    )


def compare_markdown(a: ValidationRun, b: ValidationRun) -> str:
    lines = [
        translate("validation_report", "# PyTorch validation: two runs"),
        "",
        f"- A: {_compared(a)}",
        f"- B: {_compared(b)}",
        "",
        translate("validation_report", "| Check | A | B | Change |"),
        "| --- | --- | --- | --- |",
    ]
    for row in compare(a, b):
        change = f"{row.change:+.1%}" if row.change is not None else ""
        lines.append(
            f"| {_cell(check_name(row.name))} | {_cell(_side(row.a))} | {_cell(_side(row.b))} "
            f"| {change} |"
        )
    return "\n".join(lines) + "\n"
