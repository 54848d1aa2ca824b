"""tests/gpu/hang_c.py LIB MODE -- a Python program stuck in a CUDA call made
through ctypes (issue 33; tests/gpu/hang.py runs it under the shim).

LIB exports hang_setup(mode) and hang_wait() (tests/gpu/hang_gpu.cu built as
libhang_gpu.so; on the CPU the stand-in's tests/integration/hang_lib.c): the
setup gives the stuck stream its work and starts the releaser, hang_wait()
blocks in cudaStreamSynchronize (mode copy: cudaMemcpy device to host)
until the file HANG_RELEASE exists. Thread "waiter" calls it (the line
marked WAIT-LINE; ctypes releases the GIL), the main thread prints "ready",
then "released" once the waiter is back."""
import ctypes
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
libc = ctypes.CDLL(None)
assert lib.hang_setup(sys.argv[2].encode()) == 0


def waiter():
    libc.prctl(15, b"waiter", 0, 0, 0)  # PR_SET_NAME: the dump reads the OS name
    lib.hang_wait()  # WAIT-LINE


t = threading.Thread(target=waiter)
t.start()
time.sleep(0.2)
print("ready", flush=True)
t.join()
print("released", flush=True)
