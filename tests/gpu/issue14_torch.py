"""Issue 14 in PyTorch (run by tests/gpu/issue14.py). Prints deterministic
text only, so the bare and the shim runs can be compared.

usage: python3 issue14_torch.py pin    a background thread, named
           pt_pin_memory with prctl(PR_SET_NAME) (CPython does not set the OS
           name of a threading.Thread), allocates pinned host memory while the
           main thread (named EngineCore) captures with torch.cuda.graph in
           Global mode; a handshake makes the allocation happen inside the
           capture. Prints "capture: ok|raised", and after a successful
           capture the replayed output's check ("output: right|wrong").
       python3 issue14_torch.py item|sync|print
           x.sum().item(), torch.cuda.synchronize() or print(tensor) inside
           torch.cuda.graph (each line is marked: ITEM-LINE, SYNC-LINE,
           PRINT-LINE).
"""
import ctypes
import sys
import threading

import torch

PR_SET_NAME = 15
libc = ctypes.CDLL(None, use_errno=True)


def set_os_name(name):
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0)


def warm(x):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # warm-up, as the PyTorch docs prescribe
            y = x * 2 + 1
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return y


def pin():
    set_os_name("EngineCore")
    x = torch.ones(1 << 16, device="cuda")
    warm(x)
    empty_cache = getattr(torch._C, "_host_emptyCache", None)
    if empty_cache:
        empty_cache()
    go, done = threading.Event(), threading.Event()
    res = {}

    def background():
        set_os_name("pt_pin_memory")
        go.wait()
        try:
            t = torch.empty(3 << 20, dtype=torch.uint8, pin_memory=True)  # PIN-LINE
            res["alloc"] = "ok"
            del t
        except Exception as e:
            res["alloc"] = "raised " + type(e).__name__
        done.set()

    th = threading.Thread(target=background, name="pt_pin_memory")
    th.start()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):  # BEGIN-LINE
            y = x * 2 + 1
            go.set()
            done.wait()
            y = y + 1
        print("capture: ok")
        x.fill_(3.0)
        g.replay()
        torch.cuda.synchronize()
        print("output:", "right" if bool((y == 8.0).all()) else "wrong")
    except Exception as e:  # PyTorch raises on the 901
        go.set()
        print("capture: raised", type(e).__name__)
    th.join()
    print("background allocation:", res.get("alloc"))


def in_capture(what):
    x = torch.ones(1 << 10, device="cuda")
    warm(x)
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            y = x * 2
            if what == "item":
                v = y.sum().item()  # ITEM-LINE
            elif what == "sync":
                torch.cuda.synchronize()  # SYNC-LINE
            else:
                print(y)  # PRINT-LINE
        print("capture: ok")
    except Exception as e:
        print("capture: raised", type(e).__name__)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "pin"
    if mode == "pin":
        pin()
    else:
        in_capture(mode)
