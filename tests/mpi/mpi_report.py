"""The end of every MPI check script: gather each rank's failures, print them (and the OK lines)
on rank 0, and return the exit status that every rank shares."""

from __future__ import annotations


def finish(comm, failures: list[str], report: list[str] = ()) -> int:
    """Print ``report``, then up to 50 failures of all ranks, or ``ok: P ranks``; 1 on failure.
    Every rank gets the same status."""
    every = comm.gather(failures, root=0)
    status = 0
    if comm.Get_rank() == 0:
        for line in report:
            print(line)
        flat = [f for fs in every for f in fs]
        for f in flat[:50]:
            print(f)
        if flat:
            print(f"FAILED: {len(flat)} failures on {comm.Get_size()} ranks")
            status = 1
        else:
            print(f"ok: {comm.Get_size()} ranks")
    return comm.bcast(status, root=0)
