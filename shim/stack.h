/*
 * shim/stack.h -- copies of the calling thread's stack (shim/stack.c).
 */
#ifndef CGSHIM_STACK_H
#define CGSHIM_STACK_H

#include <stddef.h>
#include <stdint.h>

/* The largest copy cg_stack_copy makes in one call. */
#define CG_STACK_COPY_MAX 16384

/* Copy the calling thread's stack from sp up, at most cap (<= CG_STACK_COPY_MAX)
 * bytes, never past the stack's top or its last mapped page. Returns the
 * bytes copied (0 when none could be read). No allocation, no lock;
 * errno may change (the caller keeps it). */
size_t cg_stack_copy(unsigned char *dst, uintptr_t sp, size_t cap);

/* The calling thread's own stack, [*lo, *hi) (learned once per thread):
 * every address in it from the current sp up is mapped while the thread
 * lives. Returns 0 when the bounds are not known (then *lo == *hi). A
 * coroutine's, fiber's or signal stack is not inside them. No allocation,
 * no lock, errno kept. */
int cg_stack_bounds(uintptr_t *lo, uintptr_t *hi);

/* Learn the calling thread's stack bounds now (from the warm-up, outside
 * any capture), so its first copy asks the system nothing. errno kept. */
void cg_stack_thread_warm(void);

#endif
