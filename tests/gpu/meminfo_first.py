"""tests/gpu/meminfo_first.py -- a probe, not a check: what one
cuMemGetInfo_v2 costs in a PyTorch process on the first call, warm, and on
the first call after a capture (docs/measurements.md, "Where the time goes")."""
import ctypes, time, torch
x = torch.ones(1 << 16, device="cuda")
torch.cuda.synchronize()
cu = ctypes.CDLL("libcuda.so.1")
f = cu.cuMemGetInfo_v2
fr, tot = ctypes.c_size_t(), ctypes.c_size_t()
for i in range(4):
    t0 = time.perf_counter_ns(); rc = f(ctypes.byref(fr), ctypes.byref(tot)); t1 = time.perf_counter_ns()
    print("cuMemGetInfo_v2 call %d rc %d %.1f us" % (i, rc, (t1 - t0) / 1e3))
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    y = x * 2
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph(); g.capture_begin(); y = x * 2; g.capture_end(); del g
for i in range(2):
    t0 = time.perf_counter_ns(); rc = f(ctypes.byref(fr), ctypes.byref(tot)); t1 = time.perf_counter_ns()
    print("after a capture: cuMemGetInfo_v2 call %d %.1f us" % (i, (t1 - t0) / 1e3))
