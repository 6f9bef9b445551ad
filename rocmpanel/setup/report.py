"""The doctor report: verdicts and checks for one system, as JSON, text or Markdown.

The JSON shape is stable (documented in docs/doctor-json.md); keys are only ever added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocmpanel import __version__
from rocmpanel.base import datasets
from rocmpanel.base.enums import CheckStatus
from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_gib
from rocmpanel.machine.gpu_model import GpuInfo, HostFacts, SystemInfo
from rocmpanel.setup.checklist import Check, run_checks
from rocmpanel.setup.compat import Verdict, verdicts_for
from rocmpanel.setup.probe_report import ProbeReport

SCHEMA_VERSION = 1
_MARK = {
    CheckStatus.PASS: "ok",
    CheckStatus.WARN: "warn",
    CheckStatus.FAIL: "FAIL",
    CheckStatus.SKIP: "skip",
}


@dataclass(frozen=True)
class DoctorReport:
    """Everything ``rocmpanel doctor`` and the Setup tab show about one system."""

    system: SystemInfo
    verdicts: tuple[Verdict, ...]
    checks: tuple[Check, ...]
    probe: ProbeReport | None = None
    captured_from: tuple[str, ...] = ()
    data: datasets.DatasetInfo | None = None  # the compatibility data the verdicts used
    #: Another machine's diagnosis (pasted output): its fixes are commands to run there.
    other_machine: bool = False

    def data_line(self) -> str:
        """ "Compatibility data: built-in data, newest ROCm release known: 2026-10-05"."""
        if self.data is None:
            return ""
        line = translate("DoctorReport", "Compatibility data: {data}").format(
            data=self.data.describe()
        )
        if self.data.is_stale():
            line += " " + translate(
                "DoctorReport", "(may be stale: `rocmpanel data update` installs newer data)"
            )
        return line

    @property
    def failed(self) -> bool:
        return any(c.status is CheckStatus.FAIL for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def gpu_rows(self) -> list[tuple[GpuInfo, Verdict]]:
        return list(zip(self.system.gpus, self.verdicts, strict=True))

    def to_dict(self) -> dict[str, Any]:
        sys_ = self.system
        return {
            "schema": SCHEMA_VERSION,
            "rocmpanel": __version__,
            "captured_from": list(self.captured_from),
            "other_machine": self.other_machine,  # fixes are commands to run there
            "data_as_of": self.data.data_as_of if self.data else None,
            "data": self.data.as_dict() if self.data else None,
            "system": {
                "os": sys_.os,
                "os_version": sys_.os_version,
                "rocm_version": sys_.rocm_version,
                "driver": sys_.driver,
                "notes": list(sys_.notes),
            },
            "gpus": [
                {
                    "name": gpu.name,
                    "gfx": gpu.gfx,
                    "pci_id": gpu.pci_id,
                    "bdf": gpu.bdf,
                    "vram_bytes": gpu.vram_bytes,
                    "integrated": gpu.integrated,
                    "sources": list(gpu.sources),
                    "verdict": verdict.as_dict(),
                }
                for gpu, verdict in self.gpu_rows()
            ],
            "checks": [
                {
                    "id": c.id,
                    "title": c.title,
                    "status": c.status.value,
                    "message": c.message,
                    "fix": c.fix.text if c.fix else None,
                    "fix_kind": c.fix.kind.value if c.fix else None,
                    "fix_env": {"name": c.fix.name, "value": c.fix.value}
                    if c.fix and c.fix.name
                    else None,
                }
                for c in self.checks
            ],
        }

    def _system_lines(self) -> list[str]:
        s = self.system
        lines = [
            translate("DoctorReport", "OS: {os}").format(os=s.os)
            + (f" ({s.os_version})" if s.os_version else ""),
            translate("DoctorReport", "ROCm: {version}").format(
                version=s.rocm_version or translate("DoctorReport", "not found")
            ),
            translate("DoctorReport", "Driver: {driver}").format(
                driver=s.driver or translate("DoctorReport", "n/a")
            ),
        ]
        if self.captured_from:
            lines.insert(
                0,
                translate("DoctorReport", "Analysed from captured output: {kinds}").format(
                    kinds=", ".join(self.captured_from)
                ),
            )
        if self.data is not None:
            lines.append(self.data_line())
            lines += [
                translate("DoctorReport", "Data note: {note}").format(note=p)
                for p in self.data.problems
            ]
        return lines

    def to_text(self, no_gpu_hint: str = "") -> str:
        """The report as text; ``no_gpu_hint`` follows "No AMD GPU found." (the live
        machine's CLI report names the demo there)."""
        lines = ["rocmpanel doctor", "", *self._system_lines(), ""]
        if not self.system.gpus:
            lines.append("No AMD GPU found.")
            if no_gpu_hint:
                lines.append(no_gpu_hint)
        for i, (gpu, verdict) in enumerate(self.gpu_rows()):
            kind = {True: "integrated", False: "discrete"}.get(gpu.integrated or False, "")
            lines.append(
                f"GPU {i}: {gpu.name}  [{gpu.gfx or 'gfx n/a'}]  "
                f"{format_gib(gpu.vram_bytes)}  {kind}".rstrip()
            )
            lines.append(
                f"  PCI {gpu.pci_id or 'n/a'} at {gpu.bdf or 'n/a'}; seen by "
                f"{', '.join(gpu.sources)}"
            )
            override = f" (HSA_OVERRIDE_GFX_VERSION={verdict.override})" if verdict.override else ""
            lines.append(f"  Verdict: {verdict.status.value}{override}: {verdict.reason}")
            if verdict.source:
                lines.append(f"  Source ({verdict.knowledge}): {verdict.source}")
            for advice in verdict.advice:
                mark = "DANGER" if advice.severity == "danger" else "Warning"
                lines.append(f"  {mark}: {advice.text} (Source: {advice.source})")
        # Notes (a capture cut short, lspci without -nn...) explain the GPU list: right after it.
        lines += [f"Note: {note}" for note in self.system.notes]
        lines += ["", "Checks:"]
        label = "fix on that machine" if self.other_machine else "fix"
        for c in self.checks:
            lines.append(f"  [{_MARK[c.status]:>4}] {c.title}: {c.message}")
            if c.fix and c.status in (CheckStatus.FAIL, CheckStatus.WARN):
                first, *more = c.fix.text.splitlines()
                lines.append(f"         {label}: {first}")
                lines += [f"         {' ' * len(label)}  {line}" for line in more]
        if self.probe is not None:
            lines += ["", "Workload Python:", *(f"  {x}" for x in self.probe.summary_lines())]
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """A forum-ready report."""
        lines = [
            "### " + translate("DoctorReport", "rocmpanel doctor report"),
            "",
            *(f"- {x}" for x in self._system_lines()),
            "",
        ]
        lines += [
            translate("DoctorReport", "| GPU | gfx | VRAM | PCI id | verdict |"),
            "| --- | --- | --- | --- | --- |",
        ]
        for gpu, verdict in self.gpu_rows():
            override = f" ({verdict.override})" if verdict.override else ""
            lines.append(
                f"| {gpu.name} | {gpu.gfx or 'n/a'} | {format_gib(gpu.vram_bytes)} "
                f"| {gpu.pci_id or 'n/a'} | {verdict.status.value}{override} |"
            )
        if not self.system.gpus:
            lines.append("| {} | | | | |".format(translate("DoctorReport", "no AMD GPU found")))
        lines += [
            "",
            translate("DoctorReport", "| check | status | details |"),
            "| --- | --- | --- |",
        ]
        for c in self.checks:
            fix = ""
            if c.fix and c.status in (CheckStatus.FAIL, CheckStatus.WARN):
                code = "<br>".join(f"`{line}`" for line in c.fix.text.splitlines())
                label = (
                    translate("DoctorReport", "Fix on that machine")
                    if self.other_machine
                    else translate("DoctorReport", "Fix")
                )
                fix = f" {label}: {code}"

            lines.append(f"| {c.title} | {c.status.value} | {c.message}{fix} |")
        if self.probe is not None:
            lines += ["", "```", *self.probe.summary_lines(), "```"]
        notes = [*(v.reason for v in self.verdicts), *self.system.notes]
        if notes:
            lines += ["", *(f"- {n}" for n in notes)]
        generated = translate("DoctorReport", "Generated by rocmpanel {version}.")
        lines += ["", f"_{generated.format(version=__version__)}_"]
        return "\n".join(lines) + "\n"


def build_report(
    system: SystemInfo,
    host: HostFacts,
    probe: ProbeReport | None = None,
    captured_from: tuple[str, ...] = (),
    *,
    other_machine: bool = False,
) -> DoctorReport:
    """The report of ``system``. ``other_machine``: it is not this machine (pasted output,
    the demo), so variable fixes become commands to copy for that machine's OS
    (:mod:`rocmpanel.setup.remote_fix`), never changes staged here."""
    verdicts = verdicts_for(system.gpus, system.os, system.rocm_version)
    checks = run_checks(system, verdicts, host, probe)
    if other_machine:
        from rocmpanel.setup.remote_fix import for_other_machine

        checks = for_other_machine(checks, system.os)
    return DoctorReport(
        system, verdicts, checks, probe, captured_from, datasets.active(), other_machine
    )
