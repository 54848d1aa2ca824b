"""A correct PyTorch program with CUDA graphs as the docs prescribe (issue 31,
precision on real stacks): torch.cuda.make_graphed_callables on a small MLP,
then a whole training step (forward, backward, optimizer with capturable
AdamW) captured with torch.cuda.graph on a side stream after warm-up, and
replayed with new data copied into the static inputs. Prints losses rounded."""
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3, capturable=True)
sx = torch.randn(16, 32, device="cuda")
sy = torch.randn(16, 4, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(m(sx), sy).backward()
        opt.step()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    sloss = torch.nn.functional.mse_loss(m(sx), sy)
    sloss.backward()
    opt.step()
gen = torch.Generator(device="cuda").manual_seed(1)
for i in range(5):
    sx.copy_(torch.randn(16, 32, device="cuda", generator=gen))
    sy.copy_(torch.randn(16, 4, device="cuda", generator=gen))
    g.replay()
    print("replay %d loss %.3f" % (i, sloss.item()))
lin = torch.nn.Linear(32, 32).cuda()
glin = torch.cuda.make_graphed_callables(lin, (torch.randn(8, 32, device="cuda", requires_grad=True),))
out = glin(torch.randn(8, 32, device="cuda", requires_grad=True))
out.sum().backward()
torch.cuda.synchronize()
print("graphed callable ok", tuple(out.shape))
