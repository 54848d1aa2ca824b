#!/usr/bin/env python3
"""tests/gpu/multigpu_nccl_cases.py -- one rank of a 2-rank torch.distributed
(NCCL) job with collectives inside CUDA graphs (issue 33). Started by
tests/gpu/multigpu.py once per rank (RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, and MODE):

  MODE=loop      one graph holding an all-reduce (y = all_reduce(x * 2) + 1)
                 replayed REPLAYS times (default 200), x bumped in place
                 before each replay; the value checked after every replay
                 up to 10 replays, else every 50th and the last; then
                 the graph deleted before the process group (the order
                 that does not hang): "rank R ok replays N value V"
  MODE=teardown  the same graph replayed 5 times, then
                 dist.destroy_process_group() with the graph alive: NCCL >=
                 2.26 waits in it for the graph, which this thread deletes
                 only after it ("rank R destroying with the graph alive",
                 then, if it returns, "rank R destroy returned")
  MODE=skip      one graph per capture size (1, 2, 4, 8 x 4096 elements),
                 each size warmed up eagerly first on every rank (the
                 collectives match); rank SKIP_RANK (default 1) does not
                 capture size SKIP_SIZE (default 4) and runs that size
                 eagerly instead, as a server that skipped one size would:
                 every step's all-reduce still matches, so nothing hangs,
                 and only the cross-rank view says the ranks differ;
                 "rank R ok sizes S graphs G"
Every line starts "rank R"; "rank R FAIL ..." and exit 1 on a wrong value.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    mode = os.environ.get("MODE", "loop")
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    print("rank %d nccl %s" % (rank, ".".join(map(str, torch.cuda.nccl.version()))), flush=True)
    side = torch.cuda.Stream(device=dev)

    def warm(fn):
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream(dev).wait_stream(side)
        torch.cuda.synchronize(dev)

    if mode in ("loop", "teardown"):
        n = 1 << 20
        x = torch.full((n,), float(rank + 1), device=dev)
        y = torch.empty_like(x)

        def step():
            y.copy_(x * 2)
            dist.all_reduce(y)
            y.add_(1)

        warm(step)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        torch.cuda.synchronize(dev)
        replays = int(os.environ.get("REPLAYS", "200")) if mode == "loop" else 5
        want = 0.0
        for i in range(replays):
            x.fill_(float(rank + 1 + i))
            g.replay()
            want = 2.0 * sum(r + 1 + i for r in range(world)) + 1.0
            if replays <= 10 or i % 50 == 0 or i == replays - 1:
                torch.cuda.synchronize(dev)
                if not torch.all(y == want).item():
                    print("rank %d FAIL replay %d: %s want %s" % (rank, i, y[:4].tolist(), want), flush=True)
                    return 1
        torch.cuda.synchronize(dev)
        if mode == "teardown":
            print("rank %d destroying with the graph alive" % rank, flush=True)
            dist.destroy_process_group()
            print("rank %d destroy returned" % rank, flush=True)
            del g
            return 0
        print("rank %d ok replays %d value %.1f" % (rank, replays, want), flush=True)
        dist.barrier()
        del g
        dist.destroy_process_group()
        return 0

    # MODE=skip
    skip_rank = int(os.environ.get("SKIP_RANK", "1"))
    skip = int(os.environ.get("SKIP_SIZE", "4"))
    sizes = (1, 2, 4, 8)
    x = torch.zeros(8 * 4096, device=dev)
    y = torch.zeros(8 * 4096, device=dev)

    def step(s):
        n = s * 4096
        y[:n].copy_(x[:n] * 2)
        dist.all_reduce(y[:n])
        y[:n].add_(1)

    for s in sizes:  # the collectives of every size, on every rank, eagerly
        warm(lambda: step(s))
    graphs = {}
    for s in sizes:
        if rank == skip_rank and s == skip:
            continue
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step(s)
        graphs[s] = g
    torch.cuda.synchronize(dev)
    for i in range(3):
        for s in sizes:
            x.fill_(float(rank + 1 + i))
            if s in graphs:
                graphs[s].replay()
            else:
                step(s)  # the skipped size runs eagerly: its all-reduce still matches
            torch.cuda.synchronize(dev)
            want = 2.0 * sum(r + 1 + i for r in range(world)) + 1.0
            if not torch.all(y[:s * 4096] == want).item():
                print("rank %d FAIL size %d round %d: %s want %s" % (rank, s, i, y[:4].tolist(), want), flush=True)
                return 1
    print("rank %d ok sizes %d graphs %d" % (rank, len(sizes), len(graphs)), flush=True)
    dist.barrier()
    graphs.clear()
    torch.cuda.synchronize(dev)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
