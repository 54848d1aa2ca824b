"""PyTorch capture + replay (tests/gpu case b). Prints deterministic numbers."""
import torch

x = torch.ones(1 << 16, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):  # warm-up, as the PyTorch docs prescribe
        y = x * 2 + 1
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x * 2 + 1
for i in range(3):
    x.add_(1)
    g.replay()
torch.cuda.synchronize()
print("sum", float(y.sum()))
