/* tests/integration/hostalloc_probe.c -- tests/gpu/hostalloc_probe.cu built
 * as C against the CPU stand-in: the same program prints the same table, so
 * the stand-in's answers are checked row by row against the real driver's
 * (case hostalloc_parity in run.py; the GPU's table is the one in
 * docs/host-memory-capture.md, which tests/gpu/issue19.py checks the real
 * driver against). */
#include "../gpu/hostalloc_probe.cu"
