"""Expansion expressions (`line^k(..)`, `degree*n(..)`, `power^n(..)`, `product(..; ..)`, `bi(..)`)
on the CLI."""

import pytest

from conftest import run_cli, run_json


@pytest.mark.parametrize(
    "spec, name, shape",
    [
        # (N, degree, diameter): L(K_{2,2}) of the direct-connect paper's Fig 2.
        ("line(bipartite:2,2)", "line(bipartite:2,2)", (8, 2, 3)),
        ("line ^ 2 ( diamond )", "line^2(diamond)", (32, 2, 5)),
        ("degree*2(ring:4)", "degree*2(ring:4)", (8, 2, 4)),
        ("product(biring:4;biring:8)", "product(biring:4; biring:8)", (32, 4, 6)),
        ("power^2(complete:4)", "power^2(complete:4)", (16, 6, 2)),
        # A.6's union of a unidirectional graph without 2-cycles: degree 2d.
        (" bi ( diamond )", "bi(diamond)", (8, 4, 2)),
    ],
)
def test_topo_show_expansion(spec, name, shape):
    m = run_json("topo", "show", spec)
    assert m["topology"] == name
    n, degree, diameter = shape
    assert (m["N"], m["switches"], m["diameter"]) == (n, 0, diameter)
    assert m["min_degree"] == m["max_degree"] == degree


def test_product_of_birings_is_the_torus():
    product, torus = (
        run_json("topo", "show", "product(biring:4; biring:8)"),
        run_json("topo", "show", "torus:4x8"),
    )
    for key in ["N", "links", "min_degree", "diameter", "average_distance", "bidirectional"]:
        assert product[key] == torus[key], key


def test_bi_of_a_ring_is_the_biring_and_bidirectional():
    union, biring = run_json("topo", "show", "bi(ring:5)"), run_json("topo", "show", "biring:5")
    for key in ["N", "links", "min_degree", "diameter", "average_distance", "bidirectional"]:
        assert union[key] == biring[key], key
    # L(K_{2,2}) has 2-cycles: their two links merge (bandwidths add), 3 neighbours, not 4.
    m = run_json("topo", "show", "bi(line(bipartite:2,2))")
    assert (m["N"], m["min_degree"], m["max_degree"], m["bidirectional"]) == (8, 3, 3, True)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("line(bipartite:2,2", "line(bipartite:2,2: position 5: '(' is never closed"),
        ("line^0(diamond)", "line^0(diamond): position 6: line^k: k must be between 1 and 64, got 0"),
        ("line(switch:4)", "line graph expansion needs a topology without switches"),
        ("product(nosuch:3; ring:4)", "unknown topology family 'nosuch'"),
        ("bi(switch:4)", "bidirectional union needs a topology without switches"),
        ("bi^2(ring:4)", "bi^2(ring:4): position 3: bidirectional union is written bi(SPEC)"),
    ],
)
def test_bad_expression_exits_2_with_one_line(spec, message):
    proc = run_cli("topo", "show", spec, check_status=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
