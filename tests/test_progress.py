"""The progress bar wrapper returns the call's result and polls while it runs."""

import threading
import time

import pytest

from collsynth.progress import run_with_progress


def test_fast_call_shows_no_bar_and_returns():
    calls = []
    assert run_with_progress(lambda: 42, "x", poll=lambda: calls.append(1) or (0, 0)) == 42
    assert calls == []


def test_slow_call_is_polled_until_done():
    polls = []
    done = threading.Event()

    def work():
        time.sleep(0.5)
        done.set()
        return "ok"

    assert run_with_progress(work, "x", poll=lambda: polls.append(1) or (1, 2), delay=0.05) == "ok"
    assert done.is_set() and len(polls) >= 2


def test_errors_propagate():
    def boom():
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope"):
        run_with_progress(boom, "x", delay=0.01)
