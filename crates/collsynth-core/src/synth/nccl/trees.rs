//! NCCL's trees: a chain inside each box and a double binary tree across boxes.
//!
//! - trees.cc `ncclGetBtree`: the binary tree over boxes 0..n (box 0 on top with one child),
//!   and `ncclGetDtree`: the second tree mirrors it (b -> n-1-b) for even n and shifts it
//!   (b -> b+1 mod n) for odd n. `parentChildType` is 0 when a box is below its parent's
//!   index (its first child), 1 otherwise (in the mirrored / shifted numbering for tree 2).
//! - connect.cc `ncclTopoPreset`: inside a box the tree is the channel's chain
//!   (`tree.up = intra[i-1]`, `tree.down[0] = intra[i+1]`); with the Ampere pattern
//!   `NCCL_TOPO_PATTERN_BALANCED_TREE` the chain's first rank (`treeToParent`, index 0)
//!   talks to the parent box and to child 1, its second (`treeToChild0`, index 1) to child 0;
//!   with one rank per box (pattern TREE) the one rank does all three.
//! - connect.cc `connectTrees`: channel c uses tree 1, channel c + nChannels (the copy
//!   `ncclTopoPostset` makes) tree 2, each box's up link going to its parent box's
//!   `treeToChild0` or `treeToChild1` rank by `parentChildType`.

use crate::synth::baselines::dbt::Tree;

/// One box in a binary tree over boxes: parent, first child, second child, child type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxNode {
    pub up: Option<usize>,
    pub down0: Option<usize>,
    pub down1: Option<usize>,
    /// 0 when the box is its parent's first child (below its index), else 1.
    pub child_type: u8,
}

/// `ncclGetBtree(n, b)`.
pub fn btree(n: usize, b: usize) -> BoxNode {
    let mut bit = 1usize;
    while bit < n && bit & b == 0 {
        bit <<= 1;
    }
    if b == 0 {
        return BoxNode { up: None, down0: None, down1: (n > 1).then_some(bit >> 1), child_type: 0 };
    }
    let mut up = (b ^ bit) | (bit << 1);
    if up >= n {
        up = b ^ bit;
    }
    let mut lowbit = bit >> 1;
    let down0 = (lowbit > 0).then(|| b - lowbit);
    let mut down1 = None;
    while lowbit > 0 {
        if b + lowbit < n {
            down1 = Some(b + lowbit);
            break;
        }
        lowbit >>= 1;
    }
    BoxNode { up: Some(up), down0, down1, child_type: u8::from(b >= up) }
}

/// `ncclGetDtree(n, b)`: box b in tree 1 and in tree 2.
pub fn dtree(n: usize, b: usize) -> [BoxNode; 2] {
    let first = btree(n, b);
    let (to, from): (Box<dyn Fn(usize) -> usize>, usize) = if n % 2 == 1 {
        (Box::new(move |x| (x + 1) % n), (b + n - 1) % n)
    } else {
        (Box::new(move |x| n - 1 - x), n - 1 - b)
    };
    let m = btree(n, from);
    let second =
        BoxNode { up: m.up.map(&to), down0: m.down0.map(&to), down1: m.down1.map(&to), child_type: m.child_type };
    [first, second]
}

/// The rank tree of one channel: `chains[b]` is box b's chain, `k` the tree (0 or 1).
pub fn rank_tree(n_ranks: usize, chains: &[Vec<usize>], k: usize) -> Tree {
    let n = chains.len();
    let mut parent = vec![None; n_ranks];
    let mut top = chains[0][0];
    for (b, chain) in chains.iter().enumerate() {
        for w in chain.windows(2) {
            parent[w[1]] = Some(w[0]);
        }
        let node = dtree(n, b)[k];
        match node.up {
            None => top = chain[0],
            Some(p) => {
                let pc = &chains[p];
                // treeToChild0 is index 1 under BALANCED_TREE (index 0 with one rank per box)
                let child0 = if pc.len() >= 2 { pc[1] } else { pc[0] };
                parent[chain[0]] = Some(if node.child_type == 0 { child0 } else { pc[0] });
            }
        }
    }
    let mut children = vec![Vec::new(); n_ranks];
    for (r, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(r);
        }
    }
    Tree { top, parent, children }
}
