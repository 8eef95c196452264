//! Which channel's signal a wait sees, as microsoft/mscclpp's executor decides it
//! (src/core/executor/executor.cc): `setupConnections` makes one connection per `connected_to`
//! entry, memory channels first, then port channels, each tagged by a counter per peer
//! (`peerTagCounters[peer]++`), and `setupChannels` builds each channel's semaphore over the
//! connection of that tag. So the j-th memory channel of rank a to rank b meets the j-th of b
//! to a, and port channels likewise after them, wherever their entries stand in `channels`.

use super::mutation::ours;
use crate::ir::Collective;
use crate::mscclpp::validate;
use serde_json::{json, Value};

/// `ours("ring:4")` with G = 1: rank 2 waits on its one memory channel to rank 1 for rank
/// 1's puts.
fn ring() -> Value {
    ours("ring:4", Collective::Allgather)
}

/// Add a channel of `kind` from `rank` to `peer` to `rank`'s list, first or last; `shift`
/// renumbers `rank`'s thread blocks' memory channel ids so that they name the same channels
/// as before.
fn add_channel(v: &mut Value, rank: usize, peer: usize, kind: &str, first: bool, shift: bool) {
    let gpu = &mut v["gpus"][rank];
    assert!(gpu["channels"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["channel_type"] == "memory" && c["connected_to"].as_array().unwrap().contains(&json!(peer))));
    let extra = json!({"channel_type": kind, "connected_to": [peer]});
    let list = gpu["channels"].as_array_mut().unwrap();
    if first {
        list.insert(0, extra);
    } else {
        list.push(extra);
    }
    if shift {
        for tb in gpu["threadblocks"].as_array_mut().unwrap() {
            for c in tb["channels"].as_array_mut().unwrap() {
                if c["channel_type"] == "memory" {
                    for id in c["channel_ids"].as_array_mut().unwrap() {
                        *id = json!(id.as_u64().unwrap() + 1);
                    }
                }
            }
        }
    }
}

fn refusal(v: &Value) -> Option<String> {
    validate(&v.to_string()).refusal()
}

#[test]
fn an_extra_memory_channel_listed_first_takes_tag_0_and_the_wait_never_ends() {
    // Rank 2's old channel to rank 1 now has tag 1; rank 1 signals on its only channel to
    // rank 2, tag 0, which rank 2's new channel holds and nothing waits on. The ring stalls.
    let mut v = ring();
    add_channel(&mut v, 2, 1, "memory", true, true);
    let why = refusal(&v).unwrap();
    assert!(why.starts_with("deadlock: "), "{why}");
    assert!(why.contains("waits on its memory channel from rank"), "{why}");
}

#[test]
fn the_same_channel_listed_first_on_both_ends_pairs_again() {
    // Both ends' old channels move to tag 1 together, so they meet again.
    let mut v = ring();
    add_channel(&mut v, 2, 1, "memory", true, true);
    add_channel(&mut v, 1, 2, "memory", true, true);
    assert_eq!(refusal(&v), None);
}

#[test]
fn an_extra_memory_channel_listed_last_changes_nothing() {
    let mut v = ring();
    add_channel(&mut v, 2, 1, "memory", false, false);
    assert_eq!(refusal(&v), None);
}

#[test]
fn a_port_channel_listed_first_does_not_move_the_memory_tags() {
    // Memory connections are all made before port ones, so a port entry ahead of the memory
    // one in `channels` leaves the memory channel at tag 0; memory ids index memory channels
    // only, so nothing is renumbered.
    let mut v = ring();
    add_channel(&mut v, 2, 1, "port", true, false);
    assert_eq!(refusal(&v), None);
}
