#!/usr/bin/env python3
"""Write the MSCCL XML test corpus in cases/ (standard library only, deterministic).

    python3 tests/data/realparse/make_cases.py [--out DIR]

This script only WRITES XML. It does not run or build any parser. The verdicts in
verdicts.json were recorded separately, with the runtimes' own parsers (see README.md).

Layout of every generated file is the one the runtimes' reader wants (one tag per line,
spaces only, double quotes); the "hostile-*" cases break that on purpose.

Case families (see README.md for the table of limits):
  real-*       copies of the files in shared/data/msccl-xml (read from --real-dir)
  selftest-*   the 10 crafted cases of realparse's check.py --selftest, written out
  limit-*      one file just inside and one just outside each parser limit
  int-*        how attribute integers are read (strtol(..., 0))
  missing-*    a required attribute left out
  odd-*        odd nchannels / ngpus values
  hasdep-*     hasdep outside {0, 1}
  hostile-*    files that break the reader's expectations
"""

import argparse
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REAL = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "shared", "data", "msccl-xml"))
REAL_FILES = [
    "forestcoll-a100x1-allgather.xml",
    "forestcoll-a100x1-allreduce.xml",
    "msccl-tools-dgx1-allgather-2steps.xml",
    "mscclang-ring3-allreduce.xml",
    "mscclang-ring4-allgather.xml",
    "teccl-amd32-allgather.xml",
]


# ------------------------------------------------------------------------------------------
# element writers
# ------------------------------------------------------------------------------------------
def step(s, typ, sb="i", so=0, db="o", do=0, cnt=1, depid=-1, deps=-1, hasdep=0, extra=""):
    return (
        f'      <step s="{s}" type="{typ}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" dstoff="{do}" cnt="{cnt}" depid="{depid}" '
        f'deps="{deps}" hasdep="{hasdep}"{extra}/>\n'
    )


def nop(s):
    return step(s, "nop", "i", 0, "i", 0, 0)


def tb(i, send, recv, chan, steps=(), inner=""):
    return '    <tb id="{}" send="{}" recv="{}" chan="{}">\n{}{}    </tb>\n'.format(
        i,
        send,
        recv,
        chan,
        "".join(steps),
        inner,
    )


def gpu(i, tbs, ic=2, oc=2, sc=0):
    return '  <gpu id="{}" i_chunks="{}" o_chunks="{}" s_chunks="{}">\n{}  </gpu>\n'.format(
        i,
        ic,
        oc,
        sc,
        "".join(tbs),
    )


ALGO_ATTRS = (
    "name",
    "proto",
    "nchannels",
    "nchunksperloop",
    "ngpus",
    "coll",
    "inplace",
    "outofplace",
    "minBytes",
    "maxBytes",
)


def algo(
    gpus,
    ngpus=2,
    nch=1,
    ncpl=2,
    coll="allgather",
    name="realparse-corpus",
    inplace=0,
    decl="",
    drop=(),
    extra=(),
    override=None,
):
    """<algo> with the attributes in the order of ALGO_ATTRS; extra=(k, v) pairs go before maxBytes."""
    vals = {
        "name": name,
        "proto": "Simple",
        "nchannels": nch,
        "nchunksperloop": ncpl,
        "ngpus": ngpus,
        "coll": coll,
        "inplace": inplace,
        "outofplace": 1 - int(inplace),
        "minBytes": 0,
        "maxBytes": 0,
    }
    vals.update(override or {})
    pairs = [(k, vals[k]) for k in ALGO_ATTRS if k not in drop and k != "maxBytes"]
    pairs += list(extra)
    if "maxBytes" not in drop:
        pairs.append(("maxBytes", vals["maxBytes"]))
    attrs = " ".join('{}="{}"'.format(*kv) for kv in pairs)
    return decl + "<algo {}>\n{}</algo>\n".format(attrs, "".join(gpus))


def filler(i, chan=0):
    """A thread block with no steps (it does nothing; it only makes the ids contiguous)."""
    return tb(i, -1, -1, chan)


# ------------------------------------------------------------------------------------------
# the base program: a correct 2-rank out-of-place allgather
#   rank r, peer p = 1-r; i = 1 chunk, o = 2 chunks (o[r] is rank r's chunk)
#   tb0 sends i[0] to p (lands in p's o[r]); tb1 receives p's chunk into o[p]; tb2 copies i[0] -> o[r]
# ------------------------------------------------------------------------------------------
def ag2_rank(r, send_tb=None, recv_tb=None, cpy_tb=None, more=(), chan=0):
    p = 1 - r
    tbs = [
        send_tb if send_tb is not None else tb(0, p, -1, chan, [step(0, "s", "i", 0, "o", r)]),
        recv_tb if recv_tb is not None else tb(1, -1, p, chan, [step(0, "r", "i", 0, "o", p)]),
        cpy_tb if cpy_tb is not None else tb(2, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r)]),
    ]
    return tbs + list(more)


def ag2(ranks_tbs=None, ic=1, oc=2, sc=0, **kw):
    ranks_tbs = ranks_tbs or {}
    g = [gpu(r, ranks_tbs.get(r) or ag2_rank(r), ic, oc, sc) for r in (0, 1)]
    return algo(g, **kw)


# ------------------------------------------------------------------------------------------
# selftest-*: the crafted cases of check.py --selftest (a 2-rank allreduce-shaped exchange)
# ------------------------------------------------------------------------------------------
def st_algo(gpus, nch=1, decl="", drop=()):
    return algo(gpus, ngpus=2, nch=nch, ncpl=2, coll="allreduce", name="selftest", decl=decl, drop=drop)


def st_pair(extra0=(), extra1=(), chan=0, ic=2, oc=2):
    g = []
    for r in (0, 1):
        p = 1 - r
        tbs = [
            tb(0, p, -1, chan, [step(0, "s", "i", 0, "o", 0, hasdep=1)]),
            tb(1, -1, p, chan, [step(0, "r", "o", 1, "o", 1, hasdep=1)]),
            tb(
                2,
                -1,
                -1,
                0,
                [
                    step(0, "nop", "o", 0, "o", 0, depid=0, deps=0),
                    step(1, "cpy", "i", 1, "o", 1, depid=1, deps=0),
                ],
            ),
        ]
        tbs += list(extra0 if r == 0 else extra1)
        g.append(gpu(r, tbs, ic, oc))
    return g


def selftest_cases():
    many = [
        tb(i, -1, -1, 0, [step(0, "cpy", "i", 0, "o", 0, hasdep=1 if i == 200 else 0)]) for i in range(4, 201)
    ]
    fused = [
        tb(
            3,
            -1,
            -1,
            0,
            [
                step(0, "re", "i", 0, "o", 0),
                step(1, "re", "i", 1, "o", 0),
                step(2, "cpy", "o", 0, "i", 0, hasdep=1),
            ],
        )
    ]
    trailing = [tb(3, -1, -1, 0, [step(0, "cpy", "i", 0, "o", 0), step(1, "nop", depid=0, deps=0)])]
    return [
        ("selftest-faithful", st_algo(st_pair())),
        (
            "selftest-bid200",
            st_algo(st_pair(extra0=[tb(3, -1, -1, 0, [step(0, "cpy", depid=200, deps=0)])] + many)),
        ),
        (
            "selftest-int16",
            st_algo(
                st_pair(
                    extra0=[tb(3, 1, -1, 0, [step(0, "s", "i", 0, "o", 39999, depid=0, deps=40000)])],
                    oc=40000,
                )
            ),
        ),
        (
            "selftest-int16-checked",
            st_algo(st_pair(extra0=[tb(3, -1, -1, 0, [step(0, "cpy", "i", 39999, "o", 0)])], ic=40000)),
        ),
        (
            "selftest-octal",
            st_algo(st_pair(extra0=[tb(3, -1, -1, 0, [step(0, "cpy", depid="010", deps="0")])])),
        ),
        ("selftest-xmldecl", st_algo(st_pair(), decl='<?xml version="1.0"?>\n')),
        ("selftest-no-minBytes", st_algo(st_pair(), drop=("outofplace", "minBytes", "maxBytes"))),
        ("selftest-chan-eq-MAXCHANNELS32", st_algo(st_pair(chan=32), nch=33)),
        ("selftest-fused-re", st_algo(st_pair(extra0=fused))),
        ("selftest-trailing-nop", st_algo(st_pair(extra0=trailing))),
    ]


# ------------------------------------------------------------------------------------------
# limit-*: just inside / just outside
# ------------------------------------------------------------------------------------------
def ag2_many_tbs(ntbs, dep_on=None, cpy_at=2):
    """2-rank allgather with thread blocks 0..ntbs-1. The local copy i[0]->o[r] is done by tb `cpy_at`
    (hasdep=1); when dep_on is given, tb0 sends o[r] (not i[0]) after waiting for (depid=dep_on, deps=0).
    All other tbs are empty fillers."""
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        if dep_on is None:
            t0 = tb(0, p, -1, 0, [step(0, "s", "i", 0, "o", r)])
        else:
            t0 = tb(0, p, -1, 0, [step(0, "s", "o", r, "o", r, depid=dep_on, deps=0)])
        tbs = [t0, tb(1, -1, p, 0, [step(0, "r", "i", 0, "o", p)])]
        for i in range(2, ntbs):
            if i == cpy_at:
                tbs.append(
                    tb(i, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r, hasdep=1 if dep_on is not None else 0)])
                )
            else:
                tbs.append(filler(i))
        ranks[r] = tbs
    return ranks


def ag2_scratch_checked(x):
    """2-rank allgather staged through scratch offset x: recv p's chunk into s[x], then copy s[x] -> o[p].
    recv dstoff and cpy srcoff are bounds-checked by the parser."""
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        ranks[r] = [
            tb(0, p, -1, 0, [step(0, "s", "i", 0, "s", x)]),
            tb(1, -1, p, 0, [step(0, "r", "i", 0, "s", x, hasdep=1)]),
            tb(
                2,
                -1,
                -1,
                0,
                [step(0, "cpy", "i", 0, "o", r), step(1, "cpy", "s", x, "o", p, depid=1, deps=0)],
            ),
        ]
    return ag2(ranks, ic=1, oc=2, sc=x + 1)


def ar3_rrc(x):
    """Correct 3-rank out-of-place allreduce whose partial sum lives in scratch s[x]. Rank r reduces chunk r:
    rrc1 (tb0, from a=r+1): s[x] = i[r] + a's i[r]; rrc2 (tb1, from b=r+2): o[r] = s[x] + b's i[r];
    then o[r] is sent to a and b. Every offset x is in an rrc step or a send's dstoff: fields the parser
    does NOT bounds-check."""
    g = []
    for r in range(3):
        a, b = (r + 1) % 3, (r + 2) % 3
        t0 = tb(
            0,
            a,
            a,
            0,
            [
                step(0, "s", "i", a, "o", a),
                step(1, "rrc", "i", r, "s", x, hasdep=1),
                step(2, "s", "o", r, "o", r, depid=1, deps=1),
                step(3, "r", "o", a, "o", a),
            ],
        )
        t1 = tb(
            1,
            b,
            b,
            0,
            [
                step(0, "s", "i", b, "s", x),
                step(1, "rrc", "s", x, "o", r, depid=0, deps=1, hasdep=1),
                step(2, "s", "o", r, "o", r),
                step(3, "r", "o", b, "o", b),
            ],
        )
        g.append(gpu(r, [t0, t1], 3, 3, x + 1))
    return algo(g, ngpus=3, ncpl=3, coll="allreduce")


def ag2_deps(d):
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        ranks[r] = ag2_rank(
            r,
            send_tb=tb(0, p, -1, 0, [step(0, "s", "i", 0, "o", r, hasdep=1)]),
            cpy_tb=tb(2, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r, depid=0, deps=d)]),
        )
    return ag2(ranks)


def ag2_peer(peer_of):
    """2-rank allgather whose send/recv tbs name the peer as peer_of(p)."""
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        q = peer_of(p)
        ranks[r] = ag2_rank(
            r,
            send_tb=tb(0, q, -1, 0, [step(0, "s", "i", 0, "o", r)]),
            recv_tb=tb(1, -1, q, 0, [step(0, "r", "i", 0, "o", p)]),
        )
    return ag2(ranks)


def ag2_count(c):
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        ranks[r] = [
            tb(0, p, -1, 0, [step(0, "s", "i", 0, "o", r * c, c)]),
            tb(1, -1, p, 0, [step(0, "r", "i", 0, "o", p * c, c)]),
            tb(2, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r * c, c)]),
        ]
    return ag2(ranks, ic=c, oc=2 * c, ncpl=2 * c)


def ag2_steps(n):
    """Chunk-by-chunk 2-rank allgather: n chunks per rank, steps s=0..n-1 in the send and the recv tb."""
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        ranks[r] = [
            tb(0, p, -1, 0, [step(k, "s", "i", k, "o", r * n + k) for k in range(n)]),
            tb(1, -1, p, 0, [step(k, "r", "i", k, "o", p * n + k) for k in range(n)]),
            tb(2, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r * n, n)]),
        ]
    return ag2(ranks, ic=n, oc=2 * n, ncpl=2 * n)


def agn_direct(n):
    """Correct n-rank allgather, everything on channel 0: rank r has one tb per peer p (send=p recv=p)
    that sends i[0] and receives p's chunk into o[p], plus a local-copy tb. So every rank has n-1 send
    peers and n-1 recv peers in channel 0."""
    g = []
    for r in range(n):
        tbs = []
        for k in range(n - 1):
            p = (r + 1 + k) % n
            tbs.append(tb(k, p, p, 0, [step(0, "s", "i", 0, "o", r), step(1, "r", "i", 0, "o", p)]))
        tbs.append(tb(n - 1, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r)]))
        g.append(gpu(r, tbs, 1, n))
    return algo(g, ngpus=n, ncpl=n)


def ag2_chan(c):
    ranks = {r: ag2_rank(r, chan=c) for r in (0, 1)}
    return ag2(ranks, nch=c + 1)


def ag2_nodes(nsteps_rank0):
    """2-rank allgather; rank 0 has 64 tbs (0..63) and nsteps_rank0 step elements in all (the 3 real steps
    plus nops s=1..63, at most 64 steps per tb, distinct s per tb). The parser counts, per rank parsed,
    1 <algo> + every <gpu> + that rank's <tb>s and <step>s."""
    r, p = 0, 1
    ntbs = 64
    budget = nsteps_rank0 - 3
    assert 0 <= budget <= ntbs * 63
    per = [0] * ntbs
    k = 0
    while budget:
        per[k] += 1
        budget -= 1
        k = (k + 1) % ntbs
    tbs = []
    for i in range(ntbs):
        if i == 0:
            first = [step(0, "s", "i", 0, "o", r)]
        elif i == 1:
            first = [step(0, "r", "i", 0, "o", p)]
        elif i == 2:
            first = [step(0, "cpy", "i", 0, "o", r)]
        else:
            first = [nop(0)]
        # filler tbs (3..63) start with a nop at s=0 too, so they carry per[i]+1 steps
        tbs.append(
            tb(i, p if i == 0 else -1, p if i == 1 else -1, 0, first + [nop(s) for s in range(1, 1 + per[i])])
        )
    return tbs


def limit_nodes(total_nodes):
    # nodes for rank 0 = 1 (algo) + 2 (gpu) + 64 (tb) + steps; filler tbs 3..63 each hold one extra nop at s=0
    steps = total_nodes - 1 - 2 - 64
    # ag2_nodes counts 3 real steps + nops s>=1; the 61 filler tbs add 61 nops at s=0
    tbs0 = ag2_nodes(steps - 61)
    return ag2({0: tbs0}, ic=1, oc=2)


def ag2_subs(nsub):
    """2-rank allgather; rank 0's local-copy tb holds nsub <step> elements: the copy and nsub-1 nops
    (s cycles 0..63 because s must stay < 64: the same s repeats)."""
    r = 0
    steps = [step(0, "cpy", "i", 0, "o", r)] + [nop(k % 64) for k in range(1, nsub)]
    return ag2({0: ag2_rank(0, cpy_tb=tb(2, -1, -1, 0, steps))})


def limit_cases():
    c = []
    # dependentBid is int8_t: depid 127 vs 128 naming a real tb (129 tbs per rank)
    c.append(("limit-depid-int8-inside", ag2(ag2_many_tbs(129, dep_on=127, cpy_at=127))))
    c.append(("limit-depid-int8-outside", ag2(ag2_many_tbs(129, dep_on=128, cpy_at=128))))
    # same at RCCL's scale: depid 63 (64 tbs) vs 64 (65 tbs)
    c.append(("limit-depid-rccl-inside", ag2(ag2_many_tbs(64, dep_on=63, cpy_at=63))))
    c.append(("limit-depid-rccl-outside", ag2(ag2_many_tbs(65, dep_on=64, cpy_at=64))))
    # thread blocks per rank: Azure MSCCL_MAX_NUM_THREAD_BLOCKS = 32*MAXCHANNELS = 1024 (ids 0..1023)
    c.append(("limit-tbs-azure-inside", ag2(ag2_many_tbs(1024))))
    c.append(("limit-tbs-azure-outside", ag2(ag2_many_tbs(1025))))
    # ids 0..1022 and 1024: only 1024 <tb> elements (stays within MAX_SUBS), highest id 1024
    r_gap = {}
    for r, tbs in ag2_many_tbs(1024).items():
        r_gap[r] = tbs[:-1] + [filler(1024)]
    c.append(("limit-tbs-azure-outside-1024elems", ag2(r_gap)))
    # RCCL MSCCL_MAX_NUM_THREAD_BLOCKS = 64 (ids 0..63)
    c.append(("limit-tbs-rccl-inside", ag2(ag2_many_tbs(64))))
    c.append(("limit-tbs-rccl-outside", ag2(ag2_many_tbs(65))))
    # int16_t offsets, checked (recv dstoff, cpy srcoff into scratch)
    c.append(("limit-offset-int16-checked-inside", ag2_scratch_checked(32767)))
    c.append(("limit-offset-int16-checked-outside", ag2_scratch_checked(32768)))
    # int16_t offsets, unchecked (rrc srcoff/dstoff, send dstoff)
    c.append(("limit-offset-int16-unchecked-inside", ar3_rrc(32767)))
    c.append(("limit-offset-int16-unchecked-outside", ar3_rrc(32768)))
    # int16_t dependentStep
    c.append(("limit-deps-int16-inside", ag2_deps(32767)))
    c.append(("limit-deps-int16-outside", ag2_deps(32768)))
    c.append(("limit-deps-int16-wrap-65536", ag2_deps(65536)))
    # int16_t sendPeer / recvPeer
    c.append(("limit-peer-int16-inside", ag2_peer(lambda p: 32767)))
    c.append(("limit-peer-int16-outside", ag2_peer(lambda p: 32768)))
    c.append(("limit-peer-int16-wrap-65536", ag2_peer(lambda p: 65536 + p)))
    # uint8_t count, MSCCL_MAX_COUNT 72 (count < 72)
    c.append(("limit-count-inside", ag2_count(71)))
    c.append(("limit-count-outside", ag2_count(72)))
    # MSCCL_MAX_NUM_STEPS 64 (s < 64)
    c.append(("limit-steps-inside", ag2_steps(64)))
    c.append(("limit-steps-outside", ag2_steps(65)))
    # sends/recvs per channel, MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL 32
    c.append(("limit-sendpeers-inside", agn_direct(33)))
    c.append(("limit-sendpeers-outside", agn_direct(34)))
    # channel id vs MAXCHANNELS (Azure 32, RCCL 128; the check is channelId > MAXCHANNELS)
    c.append(("limit-chan-azure-inside", ag2_chan(31)))
    c.append(("limit-chan-azure-outside", ag2_chan(32)))
    c.append(("limit-chan-azure-outside-plus1", ag2_chan(33)))
    c.append(("limit-chan-rccl-inside", ag2_chan(127)))
    c.append(("limit-chan-rccl-outside", ag2_chan(128)))
    c.append(("limit-chan-rccl-outside-plus1", ag2_chan(129)))
    # MAX_NODES 4096 (nodes counted for the parsed rank)
    c.append(("limit-nodes-inside", limit_nodes(4095)))
    c.append(("limit-nodes-outside", limit_nodes(4096)))
    # MAX_SUBS 1024 (children of one node)
    c.append(("limit-subs-inside", ag2_subs(1024)))
    c.append(("limit-subs-outside", ag2_subs(1025)))
    # MAX_ATTR_COUNT 16: <algo> with 16 / 17 attributes, maxBytes last
    c.append(("limit-attrs-inside", ag2(extra=[("x%d" % k, k) for k in range(6)])))
    c.append(("limit-attrs-outside", ag2(extra=[("x%d" % k, k) for k in range(7)])))
    # MAX_STR_LEN 255: attribute name 254 vs 255 chars
    c.append(("limit-strlen-key-inside", ag2(extra=[("k" * 254, 1)])))
    c.append(("limit-strlen-key-outside", ag2(extra=[("k" * 255, 1)])))
    # element name 253 vs 254 chars (an unknown element inside a tb, which the runtime ignores)
    for nm, ln in (("inside", 253), ("outside", 254)):
        ranks = {
            r: ag2_rank(
                r,
                cpy_tb=tb(2, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r)], inner="      <%s/>\n" % ("e" * ln)),
            )
            for r in (0, 1)
        }
        c.append((f"limit-strlen-tag-{nm}", ag2(ranks)))
    # attribute value 255 vs 256 chars (the <algo name>, which the parser never reads)
    c.append(("limit-strlen-value-inside", ag2(name="v" * 255)))
    c.append(("limit-strlen-value-outside", ag2(name="v" * 256)))
    return c


# ------------------------------------------------------------------------------------------
# int-*, missing-*, odd-*, hasdep-*
# ------------------------------------------------------------------------------------------
def ag2_dep_text(depid_text, deps_text="0", ntbs=11, target=10):
    """tb0 sends o[r] after (depid_text, deps_text); the copy i[0]->o[r] is done by tb `target`."""
    ranks = {}
    for r, tbs in ag2_many_tbs(ntbs, dep_on=0, cpy_at=target).items():
        p = 1 - r
        tbs[0] = tb(0, p, -1, 0, [step(0, "s", "o", r, "o", r, depid=depid_text, deps=deps_text)])
        ranks[r] = tbs
    return ag2(ranks)


def misc_cases():
    c = []
    # strtol(str, NULL, 0): base auto-detection
    c.append(("int-octal-depid", ag2_dep_text("010", target=10)))  # C reads 8: tb 8 is an empty filler
    c.append(("int-hex-depid", ag2_dep_text("0x10", ntbs=17, target=16)))  # C reads 16 (the copy tb)
    c.append(("int-plus-depid", ag2_dep_text("+10", target=10)))
    c.append(("int-space-leading-depid", ag2_dep_text(" 10", target=10)))
    c.append(("int-space-trailing-depid", ag2_dep_text("10 ", target=10)))
    c.append(("int-empty-depid", ag2_dep_text("", "-1", target=10)))  # strtol("") = 0: depends on tb 0
    # "08" is not octal: strtol stops at '8' and returns 0
    c.append(("int-octal-dstoff-011", ag2_dstoff_text("011", 9)))  # rank 0: "011" = 9 in C, the right offset
    c.append(("int-octal-dstoff-08", ag2_dstoff_text("08", 8)))
    # required attributes
    c.append(("missing-minBytes", ag2(drop=("minBytes",))))
    c.append(("missing-maxBytes", ag2(drop=("maxBytes",))))
    c.append(("missing-outofplace", ag2(drop=("outofplace",))))
    ranks = {r: ag2_rank(r) for r in (0, 1)}
    ranks[0][2] = ranks[0][2].replace(' hasdep="0"', "")
    c.append(("missing-step-hasdep", ag2(ranks)))
    ranks = {r: ag2_rank(r) for r in (0, 1)}
    ranks[1][1] = ranks[1][1].replace(' chan="0"', "")
    c.append(("missing-tb-chan", ag2(ranks)))
    # odd nchannels / ngpus
    c.append(("odd-nchannels-0", ag2(nch=0)))
    c.append(("odd-nchannels-neg", ag2(nch=-1)))
    c.append(("odd-nchannels-1000", ag2(nch=1000)))
    c.append(("odd-ngpus-0", ag2(ngpus=0)))
    c.append(("odd-ngpus-neg", ag2(ngpus=-1)))
    c.append(("odd-ngpus-1-for-2", ag2(ngpus=1)))
    c.append(("odd-ngpus-3-for-2", ag2(ngpus=3)))
    # hasdep
    ranks = {r: ag2_rank(r) for r in (0, 1)}
    ranks[0][0] = tb(0, 1, -1, 0, [step(0, "s", "i", 0, "o", 0, hasdep=2)])
    c.append(("hasdep-2", ag2(ranks)))
    ranks = {r: ag2_rank(r) for r in (0, 1)}
    ranks[0][2] = tb(
        2, -1, -1, 0, [nop(0).replace('hasdep="0"', 'hasdep="2"'), step(1, "cpy", "i", 0, "o", 0)]
    )
    c.append(("hasdep-2-on-nop", ag2(ranks)))
    return c


# ------------------------------------------------------------------------------------------
# hostile-*
# ------------------------------------------------------------------------------------------
def hostile_cases():
    base = ag2()
    base.splitlines(True)
    c = []
    c.append(("hostile-empty", ""))
    c.append(("hostile-whitespace-only", "\n  \n"))
    c.append(("hostile-algo-no-gpus", algo([])))
    # unterminated tag: the tb open tag loses its '>'
    c.append(
        (
            "hostile-unterminated-tag",
            base.replace(
                '<tb id="1" send="-1" recv="1" chan="0">', '<tb id="1" send="-1" recv="1" chan="0"', 1
            ),
        )
    )
    c.append(("hostile-unterminated-algo", base.replace("</algo>\n", "")))
    c.append(("hostile-mismatched-close", base.replace("    </tb>\n", "    </gpu>\n", 1)))
    c.append(("hostile-tab-indent", base.replace("      <step", "\t<step")))
    c.append(("hostile-tab-between-attrs", base.replace('type="s" srcbuf', 'type="s"\tsrcbuf', 1)))
    c.append(
        (
            "hostile-split-tag",
            base.replace(
                '<tb id="0" send="1" recv="-1" chan="0">', '<tb id="0" send="1"\n     recv="-1" chan="0">', 1
            ),
        )
    )
    c.append(
        (
            "hostile-single-quotes",
            base.replace(
                '<tb id="1" send="-1" recv="1" chan="0">', "<tb id='1' send='-1' recv='1' chan='0'>", 1
            ),
        )
    )
    c.append(
        (
            "hostile-unquoted-value",
            base.replace(
                '<tb id="1" send="-1" recv="1" chan="0">', '<tb id="1" send="-1" recv="1" chan=0>', 1
            ),
        )
    )
    c.append(("hostile-text-between-tags", base.replace("    </tb>\n", "    </tb>\n    hello\n", 1)))
    c.append(("hostile-crlf", base.replace("\n", "\r\n")))
    c.append(("hostile-bom", "\ufeff" + base))
    c.append(("hostile-comment-in-tb", base.replace("    </tb>\n", "      <!-- a comment -->\n    </tb>\n")))
    c.append(("hostile-space-before-slash", base.replace('"/>\n', '" />\n')))
    c.append(
        (
            "hostile-dup-attr",
            base.replace(
                '<tb id="0" send="1" recv="-1" chan="0">',
                '<tb id="0" send="1" recv="-1" chan="0" chan="5">',
                1,
            ),
        )
    )
    c.append(("hostile-negative-tb-id", base.replace('<tb id="2"', '<tb id="-1"')))
    c.append(("hostile-negative-gpu-id", base.replace('<gpu id="1"', '<gpu id="-1"')))
    c.append(
        (
            "hostile-dup-gpu",
            algo([gpu(0, ag2_rank(0), 1, 2), gpu(0, ag2_rank(0), 1, 2), gpu(1, ag2_rank(1), 1, 2)]),
        )
    )
    # a child element inside <step>: the step handler reads children with a NULL handler table
    c.append(
        (
            "hostile-step-child",
            base.replace(
                'type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>',
                'type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0">\n        <x/>\n      </step>',
                1,
            ),
        )
    )
    # 65 stored transmissions in one tb: s stays < 64 but repeats (the parser checks s, not the count)
    ranks = {r: ag2_rank(r) for r in (0, 1)}
    ranks[0][2] = tb(2, -1, -1, 0, [step(k % 64, "cpy", "i", 0, "o", 0) for k in range(65)])
    c.append(("hostile-dup-s-65-steps", ag2(ranks)))
    # an attribute value far longer than MAX_STR_LEN (no length check on values)
    c.append(("hostile-value-20000", ag2(name="v" * 20000)))
    return c


def ag2_dstoff_text(text, n):
    """A 2-rank allgather of n chunks per rank whose rank-0 receive writes dstoff as `text`."""
    ranks = {}
    for r in (0, 1):
        p = 1 - r
        ranks[r] = [
            tb(0, p, -1, 0, [step(0, "s", "i", 0, "o", r * n, n)]),
            tb(1, -1, p, 0, [step(0, "r", "i", 0, "o", text if p else "0", n)]),
            tb(2, -1, -1, 0, [step(0, "cpy", "i", 0, "o", r * n, n)]),
        ]
    return ag2(ranks, ic=n, oc=2 * n, ncpl=2 * n)


def all_cases():
    return selftest_cases() + limit_cases() + misc_cases() + hostile_cases()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "cases"))
    ap.add_argument("--real-dir", default=DEFAULT_REAL, help="where the real-*.xml files are copied from")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = set()
    for f in REAL_FILES:
        dst = "real-" + f
        shutil.copyfile(os.path.join(args.real_dir, f), os.path.join(args.out, dst))
        names.add(dst)
    for name, text in all_cases():
        fn = name + ".xml"
        assert fn not in names, fn
        names.add(fn)
        with open(os.path.join(args.out, fn), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    for f in sorted(os.listdir(args.out)):
        # ours-* are collsynth's exports, kept by hand (README.md).
        if f.endswith(".xml") and f not in names and not f.startswith("ours-"):
            os.remove(os.path.join(args.out, f))
    print("wrote %d files to %s" % (len(names), args.out))


if __name__ == "__main__":
    main()
