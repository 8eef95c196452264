"""The progress bar wrapper returns the call's result and polls while it runs."""

import threading

import pytest

from collsynth.progress import run_with_progress


def test_fast_call_shows_no_bar_and_returns():
    calls = []
    assert run_with_progress(lambda: 42, "x", poll=lambda: calls.append(1) or (0, 0)) == 42
    assert calls == []


def test_slow_call_is_polled_until_done():
    # The call ends once it has been polled twice (not after a fixed sleep, which a loaded
    # machine can outlast before the second poll).
    polls = []
    polled = threading.Event()

    def poll():
        polls.append(1)
        if len(polls) >= 2:
            polled.set()
        return (1, 2)

    def work():
        polled.wait(60)
        return "ok"

    assert run_with_progress(work, "x", poll=poll, delay=0.05) == "ok"
    assert polled.is_set() and len(polls) >= 2


def test_the_call_runs_on_a_daemon_thread():
    # Ctrl-C / SIGTERM exit the CLI without waiting for a core call still running.
    seen = []
    run_with_progress(lambda: seen.append(threading.current_thread().daemon), "x")
    assert seen == [True]


def test_errors_propagate():
    def boom():
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope"):
        run_with_progress(boom, "x", delay=0.01)
