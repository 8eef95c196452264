use super::*;
use crate::ir::Op;

fn run(spec: &str, c: Collective, root: usize) -> Result<Schedule> {
    super::super::common::run_on(spec, synthesize, c, root)
}

#[test]
fn recursive_doubling_allgather() {
    for (spec, n, log) in [("switch:8", 8usize, 3u32), ("torus:4x4", 16, 4), ("biring:2", 2, 1)] {
        let s = run(spec, Collective::Allgather, 0).unwrap();
        assert_eq!(s.n_steps(), Some(log), "{spec}");
        assert_eq!(s.transfers.len(), n * (n - 1), "{spec}");
        for t in &s.transfers {
            let k = t.step.unwrap();
            assert_eq!(t.src ^ t.dst, 1 << k);
            // the shard sent is in the sender's block of 2^k ranks
            assert_eq!(s.pieces[t.piece].shard >> k, t.src >> k);
            // it was delivered by the step before, or it is the sender's own
            match t.after.as_slice() {
                [] => assert_eq!(s.pieces[t.piece].shard, t.src),
                [a] => {
                    let d = &s.transfers[*a];
                    assert_eq!((d.dst, d.piece), (t.src, t.piece));
                    assert!(d.step.unwrap() < k);
                }
                _ => panic!("one dependency at most"),
            }
        }
        let per_step: Vec<usize> = (0..log).map(|k| s.transfers.iter().filter(|t| t.step == Some(k)).count()).collect();
        assert_eq!(per_step, (0..log).map(|k| n << k).collect::<Vec<_>>(), "{spec}");
    }
}

#[test]
fn halving_and_rabenseifner() {
    let rs = run("switch:8", Collective::ReduceScatter, 0).unwrap();
    assert!(rs.transfers.iter().all(|t| t.op == Op::Reduce));
    // recursive halving: 4 shards at the first step across distance 4, then 2, then 1
    for (step, dist, count) in [(0u32, 4usize, 32usize), (1, 2, 16), (2, 1, 8)] {
        let at: Vec<_> = rs.transfers.iter().filter(|t| t.step == Some(step)).collect();
        assert_eq!(at.len(), count);
        assert!(at.iter().all(|t| t.src ^ t.dst == dist));
    }
    let ar = run("switch:8", Collective::Allreduce, 0).unwrap();
    assert_eq!(ar.n_steps(), Some(6));
    assert_eq!(ar.transfers.len(), 2 * 8 * 7);
}

#[test]
fn non_power_of_two_is_bad_input() {
    for c in [Collective::Allgather, Collective::ReduceScatter, Collective::Allreduce] {
        let e = run("ring:6", c, 0).unwrap_err();
        assert_eq!(e, CollsynthError::bad("rhd needs a power-of-two number of ranks (N = 6)"));
    }
}

#[test]
fn binomial_broadcast_any_n() {
    let s = run("biring:6", Collective::Broadcast, 2).unwrap();
    assert_eq!(s.n_steps(), Some(3));
    assert_eq!(s.transfers.len(), 5);
    let hops: Vec<(usize, usize, u32)> = s.transfers.iter().map(|t| (t.src, t.dst, t.step.unwrap())).collect();
    assert_eq!(hops, vec![(2, 3, 0), (2, 4, 1), (3, 5, 1), (2, 0, 2), (3, 1, 2)]);
    let r = run("biring:6", Collective::Reduce, 2).unwrap();
    assert!(r.transfers.iter().all(|t| t.op == Op::Reduce));
    assert_eq!(r.n_steps(), Some(3));
    assert_eq!(r.transfers.iter().filter(|t| t.dst == 2).count(), 3);
}
