"""Issue 15: the stale static input in PyTorch. A graph is captured reading
static_x; the program then *reassigns* static_x (a new tensor) instead of
copying into it, drops the old one and replays. Under
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync the old tensor's memory goes
back to the driver (cudaFreeAsync) and the shim names the captured kernel
and its parameter (CGS018) and announces the replay (CGS019). Under the
native caching allocator the free never reaches the driver: nothing is seen
(the documented limit). Prints the replay's result either way."""
import gc
import torch

static_x = torch.ones(1 << 20, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        y = static_x * 2 + 1
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = static_x * 2 + 1
g.replay()
torch.cuda.synchronize()
# the bug: reassign instead of static_x.copy_(new)
static_x = torch.full((1 << 20,), 5.0, device="cuda")
gc.collect()
torch.cuda.synchronize()
g.replay()
torch.cuda.synchronize()
print("replayed; y[0] =", float(y[0]), "(a correct program would read 11)")
