import time

from comparisons.runner import time_call


def test_time_call_counts_warmup_and_repeats():
    calls = []
    t = time_call(lambda: calls.append(1), repeats=4, warmup=2)
    assert len(calls) == 6
    assert t.repeats == 4 and 0 <= t.best <= t.median


def test_time_call_min_time_loops_short_calls():
    calls = []
    t = time_call(lambda: calls.append(1), repeats=2, warmup=0, min_time=0.01)
    assert len(calls) > 2
    assert t.best < 0.01


def test_time_call_measures_sleep():
    t = time_call(lambda: time.sleep(0.002), repeats=2, warmup=0)
    assert t.best >= 0.0015
