//! (in progress) single-root broadcast / reduce by arborescence packing (Edmonds).
