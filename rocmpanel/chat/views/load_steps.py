"""The chat worker's load steps in the window's language.

The worker (``workers/_chat_engine.py``, ``workers/_chat_load.py``) imports nothing of
rocmpanel, so it reports its steps in English; the model panel shows them, and translates
them here. A step this module does not know (a newer worker's) is shown as it came.
``tests/chat/views/test_load_steps.py`` checks that every step the worker sends is known.
"""

from __future__ import annotations

import re

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate

FIXED_STEPS = (
    QT_TRANSLATE_NOOP("load_steps", "Importing torch and transformers"),
    QT_TRANSLATE_NOOP("load_steps", "Reading the tokenizer"),
    QT_TRANSLATE_NOOP("load_steps", "Ready check"),
    QT_TRANSLATE_NOOP("load_steps", "Loaded"),
)
# "Loading weights (3/10)", "(nf4 on 2 GPUs)", "(bf16 on cpu)": the worker's f-strings.
_SHARDS = re.compile(r"Loading weights \((?P<done>\d+)/(?P<total>\d+)\)\Z")
_ON_GPUS = re.compile(r"Loading weights \((?P<precision>\S+) on (?P<count>\d+) GPUs\)\Z")
_ON_DEVICE = re.compile(r"Loading weights \((?P<precision>\S+) on (?P<device>\S+)\)\Z")


def step_text(step: str) -> str:
    """``step`` (as the worker sent it) in the window's language."""
    if step in FIXED_STEPS:
        return translate("load_steps", step)
    match = _SHARDS.match(step)
    if match:
        return translate("load_steps", "Loading weights ({done}/{total})").format(
            **match.groupdict()
        )
    match = _ON_GPUS.match(step)
    if match:
        return translate("load_steps", "Loading weights ({precision} on {count} GPUs)").format(
            **match.groupdict()
        )
    match = _ON_DEVICE.match(step)
    if match:
        return translate("load_steps", "Loading weights ({precision} on {device})").format(
            **match.groupdict()
        )
    return step
