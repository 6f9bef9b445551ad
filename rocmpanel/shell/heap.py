"""The garbage collector around start-up.

Start-up allocates what lives as long as the window: every module, Qt wrapper and tab.
While it runs, collections of the older generations scan that heap again and again for no
garbage (~10 ms before the first frame); afterwards every collection of the oldest
generation scans all of it, which showed as 70-275 ms GUI stalls with the Monitor
graphing and a chat streaming. So the window's start pauses the collector
(:func:`pause`), and once start-up is done (first paint, the other tabs built)
:func:`settle` collects once, freezes what survived (``gc.freeze``: a permanent
generation that no collection scans; objects in it are still freed when their last
reference goes) and lets the collector run again, its oldest generation a little less
often.
"""

from __future__ import annotations

import gc

# gc's default thresholds are (700, 10, 10): the oldest generation is collected after ten
# collections of the middle one (and only when it grew by a quarter since). With the
# start-up heap frozen it holds only what came later; twice the interval halves how often
# it is scanned, while garbage cycles still go within seconds.
OLDEST_THRESHOLD = 20

_paused = False


def pause() -> None:
    """Stop automatic collections until :func:`settle` (only if they were enabled)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def settle() -> None:
    """Start-up is done: collect once, freeze the survivors, collect automatically again."""
    global _paused
    gc.collect()
    gc.freeze()
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, max(oldest, OLDEST_THRESHOLD))
    if _paused:
        _paused = False
        gc.enable()
