"""tests/gpu/issue32_churn_torch.py MODE -- re-capture churn in PyTorch
(issue 32, tests/gpu/issue32.py).

  vllm     one torch.cuda.graph per batch size (1..32, kept and replayed) from
           one capture function, then batch size 8 captured again 12 times,
           all from one loop (one site): CGS026 once, for batch size 8's
           graph only (13 captures). Batch sizes 1, 2 and 4 launch the same
           grid and differ only in a scalar argument, which the shape hash
           leaves out (it counts them as one shape over 3 buffer sets)
  compile  torch.compile(mode="reduce-overhead") of one function, compiled
           again after torch._dynamo.reset() 16 times: CUDA graph trees
           record the same graph at every compile (one site, one
           fingerprint): CGS026 fires. Measured on torch 2.11 (H200,
           2026-11-29): 16 captures of one graph, CGS026 once. Two other
           ways recorded nothing twice there: a weight moved to new memory
           before every call (w.data = ..., dynamic=True: 3 captures) and an
           input marked static whose storage changes (2 captures)
Prints "out S" (a checksum of every result), equal bare and shimmed."""
import sys

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "vllm"
torch.manual_seed(0)

if mode == "vllm":
    x = torch.ones(32 * 256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):  # warm-up, as vLLM does before capturing
            x[:256].mul_(0.5).add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()

    def capture(bs):
        """The one capture site: a graph of batch size bs."""
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            x[:bs * 256].mul_(0.5).add_(1.0)
        return g

    # One loop, so that every capture has the same site (the site is the
    # whole stack, the caller's line included): the six batch sizes are
    # kept, then batch size 8 is captured again 12 times.
    kept = {}
    for bs in (1, 2, 4, 8, 16, 32) + (8,) * 12:
        g = capture(bs)
        g.replay()
        kept.setdefault(bs, g)
    torch.cuda.synchronize()
    print("out %.4f" % x.sum().item())
elif mode == "compile":
    # The same function compiled again after torch._dynamo.reset() (a cache
    # cleared in a loop): each compile records its CUDA graph anew, the
    # same graph every time
    def fn(x, w):
        return torch.sin(x * w) + w
    total = 0.0
    with torch.no_grad():
        for i in range(16):
            x = torch.arange(4096, device="cuda", dtype=torch.float32) / 4096
            w = torch.full((1,), 1.0 + (i % 3) * 0.25, device="cuda")
            torch._dynamo.reset()
            f = torch.compile(fn, mode="reduce-overhead")
            for _ in range(3):  # warm-up, record, replay
                y = f(x, w)
            total += y.sum().item()
    print("out %.3f" % total)
else:
    sys.exit("unknown mode %s" % mode)
