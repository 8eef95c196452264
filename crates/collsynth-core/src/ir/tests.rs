use super::Collective;

#[test]
fn busbw_factors_are_nccl_tests() {
    // nccl-tests src/all_reduce.cu AllReduceGetBw: 2(n-1)/n; all_gather.cu, reduce_scatter.cu: (n-1)/n
    assert_eq!(Collective::Allreduce.busbw_factor(8), 1.75);
    assert_eq!(Collective::Allgather.busbw_factor(8), 0.875);
    assert_eq!(Collective::ReduceScatter.busbw_factor(4), 0.75);
    assert_eq!(Collective::Broadcast.busbw_factor(8), 1.0);
    assert_eq!(Collective::Reduce.busbw_factor(8), 1.0);
}

#[test]
fn nccl_tests_count_columns() {
    // float on 8 ranks: allreduce of 1 MiB is 262144 elements; allgather's count is per rank
    assert_eq!(Collective::Allreduce.nccl_tests_count(1 << 20, 4, 8), (1 << 20, 262_144));
    assert_eq!(Collective::Allgather.nccl_tests_count(1 << 20, 4, 8), (1 << 20, 32_768));
    // 100 bytes of float on 8 ranks: 25 elements, 3 per rank, trimmed to 16 bytes (4 floats)
    // per rank: 0 (nccl-tests src/reduce_scatter.cu ReduceScatterGetCollByteCount,
    // `(count/nranks) & ~(16/eltSize - 1)`, since commit 29f4114; it was (96, 3) here before)
    assert_eq!(Collective::ReduceScatter.nccl_tests_count(100, 4, 8), (0, 0));
    assert_eq!(Collective::Broadcast.nccl_tests_count(10, 4, 8), (8, 2));
    // 8 bytes of float on 8 ranks: nothing per rank, as nccl-tests prints it
    assert_eq!(Collective::Allgather.nccl_tests_count(8, 4, 8), (0, 0));
}

#[test]
fn nccl_tests_trims_each_ranks_part_to_16_bytes() {
    // `all_gather_perf -b 1G -e 1G` on 2,500 ranks (src/all_gather.cu AllGatherGetCollByteCount):
    // float: 268,435,456 elements, 107,374 per rank, & ~3 = 107,372; 1,073,720,000 bytes
    let gib = 1u64 << 30;
    assert_eq!(Collective::Allgather.nccl_tests_count(gib, 4, 2500), (1_073_720_000, 107_372));
    // int8: 429,496 per rank & ~15 = 429,488 (4 elements per rank, d313d20's rule, gave 429,496)
    assert_eq!(Collective::Allgather.nccl_tests_count(gib, 1, 2500), (1_073_720_000, 429_488));
    // double: & ~1; bf16: & ~7; every type moves the same bytes
    assert_eq!(Collective::ReduceScatter.nccl_tests_count(gib, 8, 2500), (1_073_720_000, 53_686));
    assert_eq!(Collective::ReduceScatter.nccl_tests_count(gib, 2, 2500), (1_073_720_000, 214_744));
    // allreduce keeps the count whole (src/all_reduce.cu AllReduceGetCollByteCount)
    assert_eq!(Collective::Allreduce.nccl_tests_count(1001, 4, 5), (1000, 250));
    assert_eq!(Collective::Reduce.nccl_tests_count(1001, 1, 5), (1001, 1001));
}

#[test]
fn bytes_moved_is_nccl_tests_size_in_every_type() {
    use crate::rational::Rat;
    let r = |n: u64| Rat::from_integer(n as i128);
    assert_eq!(Collective::Allgather.bytes_moved(r(1 << 30), 2500), r(1_073_720_000));
    assert_eq!(Collective::ReduceScatter.bytes_moved(r(1 << 30), 5), r(1_073_741_760));
    // a power of two that 16 N divides moves itself; below 16 N, nothing
    assert_eq!(Collective::Allgather.bytes_moved(r(1 << 20), 1024), r(1 << 20));
    assert_eq!(Collective::Allgather.bytes_moved(r(79), 5), r(0));
    assert_eq!(Collective::Allreduce.bytes_moved(r(1001), 5), r(1001));
    assert_eq!(Collective::Allgatherv.bytes_moved(r(1001), 5), r(1001));
    assert_eq!(Collective::Allgather.bytes_moved(Rat::new(161, 2), 5), r(80));
    // the same as nccl-tests' size column in each NCCL element size, for many sizes and counts
    for n in [2u64, 3, 5, 7, 8, 12, 100, 2500] {
        for m in (0..4000u64).step_by(37).chain([1 << 20, (1 << 30) + 7, 10u64.pow(9)]) {
            for c in [Collective::Allgather, Collective::ReduceScatter] {
                for elt in [1, 2, 4, 8] {
                    let (size, _) = c.nccl_tests_count(m, elt, n);
                    assert_eq!(c.bytes_moved(r(m), n as usize), r(size), "{c:?} M={m} N={n} elt={elt}");
                }
            }
        }
    }
}
