"""tests/gpu/hang_torch.py -- PyTorch stuck in torch.cuda.synchronize() while a
second thread keeps the GIL busy (issue 33; tests/gpu/hang.py runs it under
the shim and kills it once the dump is out).

Stream s is given a captured graph's replay and then a kernel that spins for
about a minute (torch.cuda._sleep); the main thread prints "ready" and waits
in torch.cuda.synchronize() (the line marked STUCK-LINE)."""
import threading

import torch

s = torch.cuda.Stream()
x = torch.zeros(1024, device="cuda")
g = torch.cuda.CUDAGraph()
with torch.cuda.stream(s):
    x.add_(1)
s.synchronize()
with torch.cuda.graph(g, stream=s):
    x.add_(1)
with torch.cuda.stream(s):
    g.replay()
    torch.cuda._sleep(int(120e9))  # ~a minute at ~2 GHz: the test kills us long before

stop = False


def hog():  # the second thread: pure Python, it holds the GIL whenever it can
    n = 0
    while not stop:
        n += sum(range(1000))


threading.Thread(target=hog, daemon=True).start()
print("ready", flush=True)
torch.cuda.synchronize()  # STUCK-LINE
stop = True
print("released", flush=True)
