use super::super::candidates::generator_sets;
use super::*;

/// (diameter, total distance) from 0 by a plain queue; None if disconnected.
fn queue_bfs(n: usize, offsets: &[usize], directed: bool) -> Option<(usize, usize)> {
    let mut shifts: Vec<usize> = offsets.iter().map(|&o| o % n).collect();
    if !directed {
        shifts.extend(offsets.iter().map(|&o| (n - o % n) % n));
    }
    let mut dist = vec![usize::MAX; n];
    dist[0] = 0;
    let mut queue = std::collections::VecDeque::from([0]);
    while let Some(u) = queue.pop_front() {
        for &s in &shifts {
            let v = (u + s) % n;
            if dist[v] == usize::MAX {
                dist[v] = dist[u] + 1;
                queue.push_back(v);
            }
        }
    }
    dist.iter().all(|&d| d != usize::MAX).then(|| (*dist.iter().max().unwrap(), dist.iter().sum()))
}

/// Searches with every level rotated, every level of a run painted, and the mix the cost
/// model picks, each against a queue BFS; the limit cuts exactly the deeper searches.
fn check(bfs: &mut CirculantBfs, set: &[usize], directed: bool) {
    let n = bfs.n;
    let expected = queue_bfs(n, set, directed);
    for cost in [PAINT_COST, 0, usize::MAX] {
        bfs.paint_cost = cost;
        assert_eq!(bfs.distances(set, directed, usize::MAX), expected, "{n} {set:?} {directed} {cost}");
        if let Some((d, _)) = expected {
            assert_eq!(bfs.distances(set, directed, d), expected);
            if d > 0 {
                assert_eq!(bfs.distances(set, directed, d - 1), None, "{n} {set:?} {directed}");
            }
        }
    }
}

#[test]
fn level_bitsets_match_a_queue_bfs() {
    for n in [2, 3, 7, 63, 64, 65, 127, 128, 129, 200, 331] {
        let mut bfs = CirculantBfs::new(n);
        for k in 1..=4.min(n - 1) {
            for directed in [true, false] {
                let top = if directed { n - 1 } else { n / 2 };
                for set in generator_sets(top, k).into_iter().take(40) {
                    check(&mut bfs, &set, directed);
                }
            }
        }
    }
}

#[test]
fn shapes() {
    assert_eq!(Run::of(&[3, 4, 5]), Some(Run { a: 3, r: 3, one: false }));
    assert_eq!(Run::of(&[1, 2, 3]), Some(Run { a: 1, r: 3, one: false }));
    assert_eq!(Run::of(&[1, 7, 8]), Some(Run { a: 7, r: 2, one: true }));
    assert_eq!(Run::of(&[1, 7]), Some(Run { a: 7, r: 1, one: true }));
    assert_eq!(Run::of(&[5]), Some(Run { a: 5, r: 1, one: false }));
    assert_eq!(Run::of(&[2, 7, 8]), None);
    assert_eq!(Run::of(&[1, 3, 5]), None);
    assert_eq!(Run::of(&[]), None);
}

/// Every run shape on every small N (disconnected ones too, offsets past N/2 undirected,
/// intervals wrapping around Z_n more than once), and on large N.
#[test]
fn painted_runs_match_a_queue_bfs() {
    for n in 2..=70 {
        let mut bfs = CirculantBfs::new(n);
        for a in 1..n {
            for r in 1..=(n - a).min(6) {
                for directed in [true, false] {
                    check(&mut bfs, &(a..a + r).collect::<Vec<_>>(), directed);
                    if a >= 3 {
                        check(&mut bfs, &std::iter::once(1).chain(a..a + r).collect::<Vec<_>>(), directed);
                    }
                }
            }
        }
    }
    for n in [127, 128, 129, 500, 1999, 2000] {
        let mut bfs = CirculantBfs::new(n);
        for a in [3, 17, 64, 100, 256] {
            for r in [1, 2, 7, 15] {
                for directed in [true, false] {
                    check(&mut bfs, &(a..a + r).collect::<Vec<_>>(), directed);
                    check(&mut bfs, &std::iter::once(1).chain(a..a + r).collect::<Vec<_>>(), directed);
                }
            }
        }
    }
}
