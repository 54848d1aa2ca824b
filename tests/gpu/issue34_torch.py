"""Issue 34: a PyTorch capture inside an NVTX range. Run under the launcher
(which makes the shim the NVTX injection library): the capture's records
carry the range stack ["decode"]; the capture after the pop carries none.
Prints "ok" and the two graphs' replays."""
import torch

x = torch.ones(1 << 16, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        y = x * 2 + 1
torch.cuda.current_stream().wait_stream(side)
torch.cuda.synchronize()

torch.cuda.nvtx.range_push("decode")
g1 = torch.cuda.CUDAGraph()
with torch.cuda.graph(g1):
    y = x * 2 + 1
torch.cuda.nvtx.range_pop()

g2 = torch.cuda.CUDAGraph()  # outside any range
with torch.cuda.graph(g2):
    z = x * 3
g1.replay()
g2.replay()
torch.cuda.synchronize()
print("ok", float(y[0]), float(z[0]))
