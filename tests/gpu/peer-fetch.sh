#!/usr/bin/env bash
# tests/gpu/peer-fetch.sh [DEST] -- fill DEST (default ./.peer-extra, ignored
# by git: public code stays out of our commits) with the extra peer suites
# that tests/gpu/peer runs besides ../shared/peer's three. The GPU host has
# no network, so this runs HERE, from local bare git mirrors, and the lead
# carries DEST to the device (`carry: [".peer", ".peer-extra"]`).
#
# Mirrors (made with the session's `fetch` tool; bare git dirs):
#   $CUPY_GIT (../.mirror/cupy+cupy/repo)     tag v14.2.0 (host: CuPy 14.2)
#   $JAX_GIT  (../.mirror/jax-ml+jax/repo)    tag jax-v0.11.0 (host: JAX 0.11.2;
#                                                no 0.11.2 tag in the mirror)
#   $TORCH_TREES (../shared/peer-src/test_cudagraph_trees.py): PyTorch's
#     test/inductor/test_cudagraph_trees.py paged from the code index (no
#     mirror: the repo is too big to fetch); absent -> torch_trees is left out.
# Suites written (one folder each: test files, pytest.args, env, LICENSE):
#   cupy_cuda   CuPy tests/cupy_tests/cuda_tests: streams, memory pools
#               (incl. stream-ordered), pinned memory, devices, runtime, driver,
#               memory hooks; -m "not slow" (the slow ones take 70% of the GPU,
#               which the groups running beside them need).
#   jax_more    JAX nn_test.py, random_test.py: many small jitted programs, each
#               a CUDA graph under the command-buffer flags (JAX=1 in env).
#   jax_lax     JAX lax_numpy_reducers_test.py, JAX_NUM_GENERATED_CASES=3.
#   torch_trees PyTorch CUDA-graph trees (torch.compile mode=reduce-overhead).
# SOURCES.txt records what came from where.
set -eu
cd "$(dirname "$0")/../.."
DEST=${1:-.peer-extra}
CUPY_GIT=${CUPY_GIT:-../.mirror/cupy+cupy/repo}
JAX_GIT=${JAX_GIT:-../.mirror/jax-ml+jax/repo}
CUPY_TAG=${CUPY_TAG:-v14.2.0}
JAX_TAG=${JAX_TAG:-jax-v0.11.0}
TORCH_TREES=${TORCH_TREES:-../shared/peer-src/test_cudagraph_trees.py}
JAX_CASES=${PEER_JAX_CASES:-2}
rm -rf "$DEST"; mkdir -p "$DEST"
SRC="$DEST/SOURCES.txt"
: > "$SRC"

take() {   # take GITDIR TAG PATH DESTDIR: one file out of a mirror
  mkdir -p "$4"
  git --git-dir="$1" show "$2:$3" > "$4/$(basename "$3")"
  echo "$(basename "$4")/$(basename "$3") <- $(basename "$(dirname "$1")") $2:$3" >> "$SRC"
}

# CuPy cuda_tests (they import only cupy, cupy.testing, pytest, numpy)
d=$DEST/cupy_cuda
for f in test_stream test_memory test_pinned_memory test_device test_runtime test_driver test_memory_hook; do
  take "$CUPY_GIT" "$CUPY_TAG" "tests/cupy_tests/cuda_tests/$f.py" "$d"
done
for f in test_debug_print test_line_profile; do
  take "$CUPY_GIT" "$CUPY_TAG" "tests/cupy_tests/cuda_tests/memory_hooks_tests/$f.py" "$d"
done
git --git-dir="$CUPY_GIT" show "$CUPY_TAG:LICENSE" > "$d/LICENSE"
# TestDeviceSwitch::test_thread_safe needs two GPUs: on one it blocks bare
# as under the shim until the run's limit (H200, 2026-11-28), so it is left out.
printf '%s\n' -m "not slow" -k "not (TestDeviceSwitch and test_thread_safe)" test_stream.py test_memory.py test_pinned_memory.py test_device.py \
  test_runtime.py test_driver.py test_memory_hook.py test_debug_print.py test_line_profile.py > "$d/pytest.args"

# JAX tests (they import jax._src.test_util, absl, numpy, scipy: host + .peer/wheels)
d=$DEST/jax_more
take "$JAX_GIT" "$JAX_TAG" tests/nn_test.py "$d"
take "$JAX_GIT" "$JAX_TAG" tests/random_test.py "$d"
git --git-dir="$JAX_GIT" show "$JAX_TAG:LICENSE" > "$d/LICENSE"
printf '%s\n' nn_test.py random_test.py > "$d/pytest.args"
printf '%s\n' JAX=1 "JAX_NUM_GENERATED_CASES=$JAX_CASES" > "$d/env"
d=$DEST/jax_lax
take "$JAX_GIT" "$JAX_TAG" tests/lax_numpy_reducers_test.py "$d"
git --git-dir="$JAX_GIT" show "$JAX_TAG:LICENSE" > "$d/LICENSE"
printf '%s\n' lax_numpy_reducers_test.py > "$d/pytest.args"
printf '%s\n' JAX=1 "JAX_NUM_GENERATED_CASES=$(( JAX_CASES + 1 ))" > "$d/env"

# PyTorch CUDA-graph trees
if [ -f "$TORCH_TREES" ]; then
  d=$DEST/torch_trees; mkdir -p "$d"
  # imports made tolerant of torch 2.11 (HAS_CUDA became HAS_CUDA_AND_TRITON;
  # names the excerpt does not use may be gone); the tests themselves untouched
  python3 - "$TORCH_TREES" "$d/test_cudagraph_trees.py" <<'PYEOF'
import sys
s = open(sys.argv[1]).read()
tolerant = {
    "from torch.testing._internal.inductor_utils import HAS_CPU, HAS_CUDA\n":
        "from torch.testing._internal import inductor_utils as _iu  # peer-fetch: 2.11 names\n"
        "HAS_CPU = _iu.HAS_CPU\n"
        "HAS_CUDA = getattr(_iu, 'HAS_CUDA', None) or getattr(_iu, 'HAS_CUDA_AND_TRITON', False)\n",
}
for name, mod in (("FxGraphCache", "torch._inductor.codecache"),
                  ("FunctionID", "torch._inductor.cudagraph_utils")):
    tolerant[f"from {mod} import {name}\n"] = (
        f"try:\n    from {mod} import {name}\nexcept ImportError:  # peer-fetch\n    {name} = None\n")
for old, new in tolerant.items():
    if old not in s:
        sys.exit(f"peer-fetch: {sys.argv[1]}: no line {old!r} to patch")
    s = s.replace(old, new)
open(sys.argv[2], "w").write(s)
PYEOF
  [ -f "$(dirname "$TORCH_TREES")/SOURCES.txt" ] && sed 's/^/torch_trees: /' "$(dirname "$TORCH_TREES")/SOURCES.txt" >> "$SRC"
  printf '%s\n' test_cudagraph_trees.py > "$d/pytest.args"
else
  echo "torch_trees: left out ($TORCH_TREES absent)" | tee -a "$SRC"
fi
echo "peer-fetch: $DEST filled ($(find "$DEST" -name '*.py' | wc -l) test files, $(du -sh "$DEST" | cut -f1))"
