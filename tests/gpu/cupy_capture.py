"""CuPy stream capture + launch (tests/gpu case d). Prints deterministic numbers."""
import cupy as cp

x = cp.ones(1 << 16, dtype=cp.float32)
y = cp.empty_like(x)
s = cp.cuda.Stream(non_blocking=True)
with s:
    cp.multiply(x, 2, out=y)  # warm-up: compile the kernel outside capture
    s.synchronize()
    s.begin_capture()
    cp.multiply(x, 3, out=y)
    g = s.end_capture()
g.launch(stream=s)
g.launch(stream=s)
s.synchronize()
print("sum", float(y.sum()))
