"""A correct PyTorch program, eager only (issue 31, precision on real stacks):
a few training steps of a small MLP with AdamW on the GPU, a copy of the
loss to the host each step. Prints the losses rounded (deterministic)."""
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 8)).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
x = torch.randn(128, 64, device="cuda")
y = torch.randn(128, 8, device="cuda")
for step in range(5):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(m(x), y)
    loss.backward()
    opt.step()
    print("step %d loss %.3f" % (step, loss.item()))
