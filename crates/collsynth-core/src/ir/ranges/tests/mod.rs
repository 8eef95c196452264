//! Range transfers against their expansion: the same schedule back, the same verdicts
//! (mutations included) and the same costs, bit for bit.

mod agree;
mod measure;
