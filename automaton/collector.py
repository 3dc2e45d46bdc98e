"""The cyclic garbage collector paused while a program is built."""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

_PAUSES = 0
_PAUSES_LOCK = threading.Lock()
_PAUSED_BY_US = False


@contextmanager
def collector_paused():
    """Pause the cyclic garbage collector while compiling or lowering a waiting fragment
    (process-wide, nested across threads).

    A large schema builds hundreds of thousands of small lists and tuples that all live until the
    program is finished; the collector would rescan them again and again, which was 30 to 55% of
    the compile time of MaskBench's slowest schemas. A collector the caller switched off stays off.
    """
    global _PAUSES, _PAUSED_BY_US
    with _PAUSES_LOCK:
        if _PAUSES == 0:
            _PAUSED_BY_US = gc.isenabled()
            gc.disable()
        _PAUSES += 1
    try:
        yield
    finally:
        with _PAUSES_LOCK:
            _PAUSES -= 1
            if _PAUSES == 0 and _PAUSED_BY_US:
                gc.enable()
