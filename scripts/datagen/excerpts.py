"""The parts of a large upstream file that a local copy keeps (a pin's ``excerpt:`` rule).

Some pinned files are kept as excerpts: the generator needs one table of the kernel's
amdgpu_drv.c, one function of kfd_device.c and one vendor's lines of pci.ids. A pin names
its rule (``excerpt: pciidlist``); scripts/fetch_data_sources.py cuts the download with it
before checking the pinned sha256, so a fresh fetch and the committed-to state compare byte
for byte. Each rule is pure (text in, text out) and gives back an excerpt unchanged, so it
can be checked on the local copy itself.
"""

from __future__ import annotations

from collections.abc import Callable


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _span(text: str, first: str, last: str, what: str) -> str:
    """The lines from the first one starting with ``first`` (a declaration ending in ";" does
    not count) through the next one equal to ``last`` (trailing whitespace and CR ignored),
    each ending in a newline."""
    lines = _lines(text)
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if line.startswith(first) and not line.rstrip().endswith(";")
        ),
        None,
    )
    if start is None:
        raise ValueError(f"no line starting {first!r} ({what})")
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].rstrip() == last),
        None,
    )
    if end is None:
        raise ValueError(f"no {last!r} line after {first!r} ({what})")
    return "\n".join(lines[start : end + 1]) + "\n"


def pciidlist(text: str) -> str:
    """amdgpu_drv.c: the ``pciidlist`` table through its ``MODULE_DEVICE_TABLE`` line."""
    return _span(
        text,
        "static const struct pci_device_id pciidlist[]",
        "MODULE_DEVICE_TABLE(pci, pciidlist);",
        "amdgpu's PCI id table",
    )


def kgd2kfd_probe(text: str) -> str:
    """kfd_device.c: the definition of ``kgd2kfd_probe`` through its closing brace."""
    return _span(text, "struct kfd_dev *kgd2kfd_probe(", "}", "KFD's probe function")


def pci_ids_vendor(text: str, vendor: str = "1002") -> str:
    """pci.ids: the header comment block, a blank line, then ``vendor``'s line and its
    device lines (one tab; subsystem lines and comments left out)."""
    lines = _lines(text)
    header: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    if not header:
        raise ValueError("no header comment block (pci.ids starts with '#' lines)")
    found: list[str] = []
    inside = False
    for line in lines[len(header) :]:
        if not line or line.startswith("#"):
            continue
        if not line.startswith("\t"):
            if inside:
                break
            inside = line[:4].lower() == vendor and line[4:6] == "  "
            if inside:
                found.append(line)
            continue
        if inside and not line.startswith("\t\t"):
            found.append(line)
    if not found:
        raise ValueError(f"no vendor {vendor} section")
    return "\n".join([*header, "", *found]) + "\n"


RULES: dict[str, Callable[[str], str]] = {
    "pciidlist": pciidlist,
    "kgd2kfd_probe": kgd2kfd_probe,
    "pci_ids_1002": pci_ids_vendor,
}


def cut(rule: str, text: str) -> str:
    """The excerpt ``rule`` keeps of ``text``; ValueError when the rule is unknown or the
    part it keeps is not there."""
    if rule not in RULES:
        raise ValueError(f"unknown excerpt rule {rule!r} (known: {', '.join(sorted(RULES))})")
    return RULES[rule](text)
