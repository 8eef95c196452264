"""Expansion expressions (`line^k(..)`, `degree*n(..)`, `power^n(..)`, `product(..; ..)`) on the CLI."""

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


@pytest.mark.parametrize(
    "spec, message",
    [
        ("line(bipartite:2,2", "line(bipartite:2,2: position 5: '(' is never closed"),
        ("line^0(diamond)", "line^0(diamond): position 6: line^k: k must be between 1 and 64, got 0"),
        ("line(switch:4)", "line graph expansion needs a topology without switches"),
        ("product(nosuch:3; ring:4)", "unknown topology family 'nosuch'"),
    ],
)
def test_bad_expression_exits_2_with_one_line(spec, message):
    proc = run_cli("topo", "show", spec, check_status=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
