use super::*;
use proptest::prelude::*;

type Event = (u8, u16);

/// One step of a run: push `e` (into lane `x` with `push_to`, or by `push` when `x` is 3), or
/// pop when `e` is `None`.
type Step = (Option<Event>, usize);

/// Replays `steps` on the lanes and on a plain binary heap; returns both pop sequences.
fn replay(initial: &[Event], steps: &[Step]) -> (Vec<Option<Event>>, Vec<Option<Event>>) {
    let mut sorted = initial.to_vec();
    sorted.sort_unstable();
    let mut lanes: Events<Event, 3> = Events::from_sorted(sorted.clone());
    let mut heap: BinaryHeap<Reverse<Event>> = sorted.into_iter().map(Reverse).collect();
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for &(e, x) in steps {
        match e {
            Some(e) if x == 3 => lanes.push(e),
            Some(e) => lanes.push_to(x, e),
            None => {
                got.push(lanes.pop());
                want.push(heap.pop().map(|r| r.0));
            }
        }
        if let Some(e) = e {
            heap.push(Reverse(e));
        }
    }
    while let Some(r) = heap.pop() {
        want.push(Some(r.0));
        got.push(lanes.pop());
    }
    got.push(lanes.pop());
    want.push(None);
    (got, want)
}

#[test]
fn an_event_out_of_order_for_its_lane_goes_to_the_heap_and_still_comes_out_first() {
    let mut q: Events<u32, 2> = Events::from_sorted(vec![1, 5, 9]);
    q.push_to(0, 3); // behind 9 in lane 0 it would break the order: the heap
    q.push_to(1, 7);
    q.push_to(1, 8);
    q.push_to(1, 2); // behind 8: the heap
    let out: Vec<u32> = std::iter::from_fn(|| q.pop()).collect();
    assert_eq!(out, vec![1, 2, 3, 5, 7, 8, 9]);
}

#[test]
fn push_joins_the_lane_with_the_latest_back_not_after_the_event() {
    let mut q: Events<u32, 3> = Events::from_sorted(vec![4]);
    q.push(6); // lane 0 (back 4): 4 <= 6 is the latest back
    q.push(5); // lane 0's back is 6 > 5: the empty lane 1
    q.push(7); // backs 6 and 5: lane 0
    q.push(1); // no back <= 1, lane 2 empty: lane 2
    q.push(0); // fits nowhere: the heap
    assert_eq!(q.lanes[0], [4, 6, 7]);
    assert_eq!(q.lanes[1], [5]);
    assert_eq!(q.lanes[2], [1]);
    assert_eq!(q.heap.len(), 1);
    let out: Vec<u32> = std::iter::from_fn(|| q.pop()).collect();
    assert_eq!(out, vec![0, 1, 4, 5, 6, 7]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Whatever lanes the events go to, they come out in the heap's order.
    #[test]
    fn pops_in_the_order_of_one_heap(
        initial in proptest::collection::vec((0u8..8, 0u16..50), 0..10),
        steps in proptest::collection::vec((proptest::option::weighted(0.6, (0u8..8, 0u16..50)), 0usize..4), 0..120),
    ) {
        let (got, want) = replay(&initial, &steps);
        prop_assert_eq!(got, want);
    }
}
