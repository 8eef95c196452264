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
    // 100 bytes of float on 8 ranks: 25 elements, 3 per rank, 96 bytes shown
    assert_eq!(Collective::ReduceScatter.nccl_tests_count(100, 4, 8), (96, 3));
    assert_eq!(Collective::Broadcast.nccl_tests_count(10, 4, 8), (8, 2));
    // 8 bytes of float on 8 ranks: nothing per rank, as nccl-tests prints it
    assert_eq!(Collective::Allgather.nccl_tests_count(8, 4, 8), (0, 0));
}
