"""Timing discipline for every benchmark in this project.

Warm-up calls are never timed (they include numba compilation and first-touch allocation), the
garbage collector is off while timing, and each measurement reports the best and the median of
``repeats`` runs in one process. Unit tests never time anything.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Timing", "time_call"]


@dataclass(frozen=True)
class Timing:
    """Seconds per call: ``best`` (minimum) and ``median`` over ``repeats`` timed runs."""

    best: float
    median: float
    repeats: int


def time_call(fn: Callable[[], object], repeats: int = 5, warmup: int = 1,
              min_time: float = 0.0) -> Timing:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls.

    With ``min_time`` > 0 each timed run loops ``fn`` until at least that many seconds have
    passed and reports the time per call (for calls much shorter than the clock resolution).
    """
    for _ in range(warmup):
        fn()
    samples = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            calls, start = 0, time.perf_counter()
            while True:
                fn()
                calls += 1
                elapsed = time.perf_counter() - start
                if elapsed >= min_time:
                    break
            samples.append(elapsed / calls)
    finally:
        if enabled:
            gc.enable()
    return Timing(float(np.min(samples)), float(np.median(samples)), repeats)
