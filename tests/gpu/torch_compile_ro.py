"""Issue 11 (e): torch.compile(mode="reduce-overhead") on a small MLP with
three batch sizes; outputs compared with eager. Prints 'max_err <bs> ok'."""
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).cuda()
cm = torch.compile(m, mode="reduce-overhead")
with torch.no_grad():
    for bs in (4, 16, 64):
        x = torch.randn(bs, 64, device="cuda")
        for _ in range(3):  # warm-up, record, replay
            out = cm(x)
        ref = m(x)
        err = (out - ref).abs().max().item()
        print("batch %d: %s" % (bs, "ok" if err < 1e-3 else "max_err %g" % err))
torch.cuda.synchronize()
