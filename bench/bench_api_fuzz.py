"""The long run of the Python API fuzz: 10^5 calls of the public API with hostile arguments
(the calls and values of tests/api_calls.py, which `make test` runs a few thousand of),
counted by outcome: answered, BadInput, or anything else (a bug). Seeded, so a rerun makes the
same calls. Run by `make bench`; `python bench/run.py api_fuzz` alone."""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import api_calls  # noqa: E402

CALLS = 100_000
SEED = 0


def bench_api_fuzz() -> list[dict]:
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    by_call: dict[str, Counter[str]] = {name: Counter() for name, _, _ in api_calls.CALLS}
    failures: dict[str, str] = {}
    t0 = time.perf_counter()
    for _ in range(CALLS):
        name, n, call = rng.choice(api_calls.CALLS)
        args = [rng.choice(api_calls.pool(name)) for _ in range(n)]
        got = api_calls.outcome(call, args)
        kind = got if got in ("ok", "BadInput") else "other"
        outcomes[kind] += 1
        by_call[name][kind] += 1
        if kind == "other" and len(failures) < 20:
            failures.setdefault(f"{name}{tuple(args)!r}"[:300], got[:300])
    return [
        {
            "spec": "public API",
            "calls": CALLS,
            "seed": SEED,
            "ok": outcomes["ok"],
            "bad_input": outcomes["BadInput"],
            "other": outcomes["other"],
            "seconds": time.perf_counter() - t0,
            "by_call": {name: dict(c) for name, c in by_call.items()},
            "failures": failures,
        }
    ]


BENCHMARKS = {"api_fuzz": bench_api_fuzz}
