/*
 * shim/unwind.h -- fast call-site unwinding (x86-64, aarch64).
 *
 * glibc's backtrace() goes through libgcc's generic unwinder, which finds
 * the FDE and interprets its CFA program again for every frame of every
 * call (~1.4k instructions a frame). Call sites repeat: here the rule for a
 * return address (where the caller's frame starts, where its return address
 * and saved %rbp are) is worked out once and kept in a lock-free cache, so
 * a known frame costs a module lookup and two loads. A walk that repeats
 * one made before by the same thread from the same start, over the same
 * stack words, costs a comparison of those words (the walk memo).
 */
#ifndef CGSHIM_UNWIND_H
#define CGSHIM_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "stack.h"

/* A value kept with a walk in the thread's walk memo: site.c keeps the
 * id its frames intern to, so the same walk again is that id without its
 * frames copied, picked or looked up (issue 36: a steady loop's sites).
 * The value dies with the memo's way (a later walk kept in its place).
 * tag (in, 1..CG_UNWIND_TAG_MAX; 0 none): what the value depends on
 * besides the walk's frames and max; a value set under another tag is
 * not answered. val (out): the value kept with the walk answered, else 0
 * (then the frames are filled as without a tag). way, gen (out): where
 * the walk was kept or found, for cg_unwind_tag_set (way 0: nowhere). */
#define CG_UNWIND_TAG_MAX 4095u
struct cg_unwind_tag {
	unsigned tag;
	uint32_t val;
	unsigned way, gen;
};
/* Fill pcs like backtrace(): pcs[0] is the return address into
 * cg_unwind's caller, then one per frame above it, at most max (<= 64).
 * *cuda gets bit i set when pcs[i] lies in the shim, libcudart or libcuda.
 * Returns the count, or -1 when a frame needs what this unwinder does not
 * do (signal frames, DWARF expressions, an unusual .eh_frame_hdr, glibc
 * without _dl_find_object): the caller then uses backtrace(). With t
 * (may be NULL) and t->val set on return, nothing else was filled: the
 * walk is one kept before with that value. Makes no allocation and takes
 * no blocking lock. */
int cg_unwind(void **pcs, int max, uint64_t *cuda, struct cg_unwind_tag *t);
/* Keep val (nonzero) with the walk t names, under t->tag, if the way
 * still holds that walk (not kept again since, by this thread or a signal
 * handler of it) and has no value yet. Calling thread only. */
void cg_unwind_tag_set(const struct cg_unwind_tag *t, uint32_t val);

/* Deferred unwinding (the begin-capture hook: nothing that costs tens of
 * microseconds may run in the window the begin opens, issue 19). A rule
 * not yet cached costs 2-20 us on the H100 host the first time (cold
 * cache and TLB misses in a large .eh_frame: ~50 us for the first capture
 * in PyTorch). cg_unwind_warm walks with cached rules only; at the first
 * frame without one it stops and returns the frames so far, with *rest
 * holding that frame's registers and a copy of the stack above it (up to
 * CG_UNWIND_COPY bytes, never past the stack's last mapped page). Later,
 * anywhere, cg_unwind_finish goes on from *rest, working out the rules,
 * reading the copy: frames pcs[n..max), returns the new count (a frame the
 * rules do not follow, or the copy's end, ends it there). The caller frees
 * rest. cg_unwind_warm returns -1 where cg_unwind does (the caller then
 * uses backtrace() at once); *rest is NULL when no frame was cold. t as
 * for cg_unwind (a walk kept is one without a cold frame). */
#define CG_UNWIND_COPY CG_STACK_COPY_MAX
struct cg_unwind_rest {
	uintptr_t pc, sp, bp;
	uintptr_t base; /* the copy holds [base, base + len) */
	size_t len;
	unsigned char stack[CG_UNWIND_COPY];
};
int cg_unwind_warm(void **pcs, int max, uint64_t *cuda, struct cg_unwind_rest **rest, struct cg_unwind_tag *t);
int cg_unwind_finish(struct cg_unwind_rest *rest, void **pcs, int n, int max, uint64_t *cuda);
/* Give a rest back (kept as the spare, or freed). */
void cg_unwind_rest_free(struct cg_unwind_rest *rest);
/* From the warm-up, outside any capture: a copy buffer made ready (its
 * pages touched), so the first deferred walk does not allocate (with
 * cg_stack_thread_warm, it asks the system nothing either). */
void cg_unwind_spare_fill(void);

/* Whether the module at path is the shim, libcudart or libcuda (frames a
 * call site skips). */
int cg_cuda_module(const char *path);

/* Map in the .eh_frame_hdr search table of every loaded module (a first
 * unwind through a large library otherwise faults page by page). Once, at
 * the warm-up, outside any capture; errno preserved. */
void cg_unwind_prefault(void);

/* For tests: how many rules were worked out (cache misses, the process),
 * how many walks the calling thread's walk memo answered with frames, and
 * how many with a value (cg_unwind_tag). */
unsigned long cg_unwind_misses(void);
unsigned long cg_unwind_memo_hits(void);
unsigned long cg_unwind_tag_hits(void);

#endif
