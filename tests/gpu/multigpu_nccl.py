#!/usr/bin/env python3
"""tests/gpu/multigpu_nccl.py -- one rank of a 2-rank torch.distributed (NCCL)
job that captures an all-reduce into a CUDA graph and replays it (issue 18).

Started by tests/gpu/multigpu.py once per rank with RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT set (as torchrun does). Rank r works on
cuda:r: x = r + 1 everywhere; the captured graph computes y = all_reduce(x * 2)
(sum) and y += 1; every replay must give 2 * sum(r + 1) + 1, and x is then
bumped in place (the graph reads it) so each replay's expected value differs.
Prints one line per rank:
  rank R ok replays N value V
or "rank R FAIL ..." and exits 1.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    n = 1 << 20
    x = torch.full((n,), float(rank + 1), device=dev)
    y = torch.empty_like(x)

    def step():
        y.copy_(x * 2)
        dist.all_reduce(y)
        y.add_(1)

    # NCCL warm-up outside the capture (communicator set-up), on a side
    # stream as torch.cuda.graph expects.
    s = torch.cuda.Stream(device=dev)
    s.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream(dev).wait_stream(s)
    torch.cuda.synchronize(dev)

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    torch.cuda.synchronize(dev)

    replays = 10
    for i in range(replays):
        x.fill_(float(rank + 1 + i))
        g.replay()
        torch.cuda.synchronize(dev)
        want = 2.0 * sum(r + 1 + i for r in range(world)) + 1.0
        got = y[:8].tolist()
        if any(v != want for v in got) or not torch.all(y == want).item():
            print("rank %d FAIL replay %d: %s want %s" % (rank, i, got[:4], want), flush=True)
            dist.destroy_process_group()
            return 1
    print("rank %d ok replays %d value %.1f" % (rank, replays, want), flush=True)
    dist.barrier()
    del g
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
