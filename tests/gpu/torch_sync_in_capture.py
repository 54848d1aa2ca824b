"""Issue 11 (d): torch.cuda.synchronize() inside torch.cuda.graph. PyTorch
raises; the shim must name CGS007 with this script's line first. Prints
deterministic text only."""
import torch

x = torch.ones(1 << 10, device="cuda")
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(g):
        y = x * 2
        torch.cuda.synchronize()  # SYNC-LINE
    print("capture: ok")
except Exception as e:  # PyTorch raises on the 900 / 901
    print("capture: raised", type(e).__name__)
