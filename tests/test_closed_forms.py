"""Closed forms of the baselines, in both the simulator and the alpha-beta model (docs/architecture.md:
the two agree where the analytic model is exact). alpha = lat (us), b = bw in bytes/us."""

import pytest

import collsynth

M = 240 * 2**20  # divisible by 2N for every N below, so no byte rounding


def times(spec: str, collective: str, algorithm: str, **kw) -> tuple[float, float, dict]:
    s = collsynth.synthesize(spec, collective, algorithm, **kw)
    e = s.evaluate(str(M))
    return e["sf_time_us"], e["alpha_beta_us"], e


@pytest.mark.parametrize("n, bw, lat", [(2, 100, 1), (5, 25, 0.5), (8, 400, 2)])
def test_ring_allgather_and_reduce_scatter_on_unidirectional_ring(n, bw, lat):
    b = bw * 1e3
    for coll in ["allgather", "reduce-scatter"]:
        sim, ab, e = times(f"ring:{n},bw={bw},lat={lat}", coll, "ring")
        expected = (n - 1) * (lat + M / (n * b))
        assert sim == pytest.approx(expected, rel=1e-9) and ab == pytest.approx(expected, rel=1e-9)
        assert e["optimality"] == 1.0


@pytest.mark.parametrize("spec, n, optimality", [("biring:6", 6, 1.0), ("torus:4x4", 16, 0.5)])
def test_bidirectional_ring_allreduce(spec, n, optimality):
    # each shard in two halves, one each way: 2(N-1) steps of alpha + M/(2N b)
    sim, ab, e = times(spec, "allreduce", "ring")
    expected = 2 * (n - 1) * (1.0 + M / (2 * n * 100e3))
    assert sim == pytest.approx(expected, rel=1e-9) and ab == pytest.approx(expected, rel=1e-9)
    # a ring uses 2 of a torus node's 4 links: half the bandwidth of the RS+AG bound
    assert e["steps"] == 2 * (n - 1) and e["optimality"] == optimality


def test_ring_allreduce_through_a_switch():
    # both directions share each rank's one uplink: 2(N-1) steps of 2 hops + M/(N b)
    sim, ab, e = times("switch:8", "allreduce", "ring")
    assert ab == pytest.approx(14 * (2.0 + M / (8 * 100e3)), rel=1e-9)
    # store-and-forward through the switch serializes the two halves on the uplink and then
    # forwards the second one: slower than the step model, never faster
    assert sim >= ab and e["optimality"] == 1.0


@pytest.mark.parametrize("n", [4, 8])
def test_direct_allgather_on_a_switch(n):
    # one step: 2 hops of latency, the busiest link (an uplink) carries (N-1) shards
    sim, ab, e = times(f"switch:{n}", "allgather", "direct")
    assert ab == pytest.approx(2 * 1.0 + (n - 1) * M / (n * 100e3), rel=1e-9)
    assert e["optimality"] == 1.0 and sim >= ab * (1 - 1e-9)


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_recursive_doubling_on_a_hypercube(dim):
    n = 2**dim
    sim, ab, e = times(f"hypercube:{dim}", "allgather", "rhd")
    # step model: step k sends 2^k shards over one link
    assert ab == pytest.approx(dim * 1.0 + (n - 1) * M / (n * 100e3), rel=1e-9)
    # the simulator has no step barriers: shards move on to the next dimension's link as soon
    # as they arrive, so the busiest link (2^(dim-1) shards) plus one hop per dimension bounds it
    assert dim * 1.0 + 2 ** (dim - 1) * M / (n * 100e3) <= sim < ab
    assert e["optimality"] == pytest.approx((n - 1) / (dim * 2 ** (dim - 1)))


def test_binomial_broadcast_on_complete_graph():
    sim, ab, e = times("complete:8", "broadcast", "rhd", root=5)
    assert sim == pytest.approx(3 * (1.0 + M / 100e3), rel=1e-9) and ab == pytest.approx(sim, rel=1e-9)
    assert e["steps"] == 3


def test_ring_broadcast_chain_and_bound():
    sim, ab, e = times("ring:6", "broadcast", "ring", root=2)
    assert sim == pytest.approx(5 * (1.0 + M / 100e3), rel=1e-9)
    assert e["bound_algbw_GBps"] == 100 and e["optimality"] == 1.0


@pytest.mark.parametrize("n, steps", [(7, 4), (8, 4), (16, 5)])
@pytest.mark.parametrize("root", [0, 3])
def test_double_binary_tree_broadcast_on_complete_graph(n, steps, root):
    # root -> top of each tree, then down trees of depth ceil(log2 N): ceil(log2 N) + 1 steps,
    # each moving one half of the message per link; the bound is the root's N-1 links
    sim, ab, e = times(f"complete:{n}", "broadcast", "dbt", root=root)
    assert e["steps"] == steps
    assert sim == pytest.approx(steps * (1.0 + M / 2 / 100e3), rel=1e-9) and ab == pytest.approx(
        sim, rel=1e-9
    )
    assert e["optimality"] == pytest.approx(2 / (n - 1))
