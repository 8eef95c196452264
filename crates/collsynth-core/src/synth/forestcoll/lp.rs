//! (in progress) the allreduce linear program of ForestColl appendix E.
