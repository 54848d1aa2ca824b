"""tests/gpu/issue32_torch.py MODE -- PyTorch work on the wrong stream
inside torch.cuda.graph (issue 32, tests/gpu/issue32.py).

  op       x.add_(1) under torch.cuda.stream(side), side made before the
           capture and never joined to it: escapes (CGS024)
  custom   a custom CUDA kernel (torch.utils.cpp_extension.load_inline)
           launched on side's handle inside the capture: escapes (CGS024)
  right    the same custom kernel on the capture stream: silent
Prints "y Y" after 3 replays (the escaped work ran once, during capture)."""
import sys

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "op"
SRC_CU = r"""
#include <torch/extension.h>
__global__ void add_one(float *p, long n) { long i = blockIdx.x * 256L + threadIdx.x; if (i < n) p[i] += 1.0f; }
void add_one_on(torch::Tensor t, int64_t stream) {
    long n = t.numel();
    add_one<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(t.data_ptr<float>(), n);
}
"""
ext = None
if mode in ("custom", "right"):
    from torch.utils.cpp_extension import load_inline
    ext = load_inline("issue32_ext", cpp_sources="void add_one_on(torch::Tensor t, int64_t stream);",
                      cuda_sources=SRC_CU, functions=["add_one_on"], verbose=False)

x = torch.zeros(1024, device="cuda")
y = torch.zeros(1024, device="cuda")
side = torch.cuda.Stream()  # made before the capture
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    x.add_(1)  # warm-up
torch.cuda.current_stream().wait_stream(s)
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    x.mul_(2)
    if mode == "op":
        with torch.cuda.stream(side):
            y.add_(1)
    elif mode == "custom":
        ext.add_one_on(y, side.cuda_stream)
    else:
        ext.add_one_on(y, torch.cuda.current_stream().cuda_stream)
for _ in range(3):
    g.replay()
torch.cuda.synchronize()
print("y %g" % y[0].item())
