/*
 * shim/labels.h -- the calling thread's label stack: NVTX ranges (the shim
 * is an NVTX injection library: InitializeInjectionNvtx2, reached through
 * NVTX_INJECTION64_PATH) and the public cgshim_label_push/pop
 * (include/cgshim/label.h). Every record carries it ("labels", log.c).
 *
 * A thread's stack is its own: made at its first push (the only
 * allocation, never on a launch), read by its own records through one
 * thread-local pointer, freed at thread exit. A thread that never pushed
 * costs a record one TLS load and a NULL test.
 */
#ifndef CGSHIM_LABELS_H
#define CGSHIM_LABELS_H

#include <stdatomic.h>
#include <string.h>

#define CG_LABEL_DEPTH 16 /* levels kept; deeper pushes are counted, not kept */
/* Bytes per kept label, NUL included: a pytest node id with parameters
 * (200+ bytes) fits whole. A longer label is cut at a UTF-8 character
 * boundary and ends in CG_LABEL_MORE, and its record says
 * labels_truncated: a consumer never takes a prefix for a name. */
#define CG_LABEL_LEN 512
#define CG_LABEL_MORE "\xe2\x80\xa6" /* U+2026 (...): the label was cut */

struct cg_label_stack {
	int depth;    /* pushes minus pops; may exceed CG_LABEL_DEPTH */
	unsigned cut; /* bit i: kept level i was cut */
	char text[CG_LABEL_DEPTH][CG_LABEL_LEN];
};

/* NULL until this thread's first push. */
extern __thread struct cg_label_stack *cg_label_tls;
/* The process's label (cgshim_label_process), NULL when none: a record of
 * a thread with an empty stack carries it instead. Each set writes the next
 * of CG_LABEL_PROC_SLOTS static buffers, whose last byte stays NUL, then
 * publishes it: a reader holds a string that is always terminated and
 * whose memory is always the shim's, overwritten only after that many
 * further sets (a record takes microseconds; a test harness sets it twice a
 * test). */
#define CG_LABEL_PROC_SLOTS 16
extern _Atomic(const char *) cg_label_proc;

/* Copies label t into dst (CG_LABEL_LEN bytes): whole when it fits, else
 * cut at a character boundary and ended with CG_LABEL_MORE; 1 when cut. */
int cg_label_copy(char *dst, const char *t);

/* What a record of this thread carries, outermost first: CGSHIM_LABEL (the
 * process's label, when set; cut into base_cut when longer than a label
 * may be), then the stack's kept levels, or, when the stack is empty, the
 * label set by cgshim_label_process. Fills at most max pointers (valid
 * until this thread's next push or pop, and while base_cut lives); returns
 * how many, *cut 1 when one of them was cut. 0 with no TLS access beyond
 * cg_label_tls when nothing is set. No allocation. */
static inline int cg_labels_get(const char *out[], int max, const char *base, char base_cut[CG_LABEL_LEN], int *cut)
{
	const struct cg_label_stack *s = cg_label_tls;
	int n = 0;
	*cut = 0;
	if (base && *base && n < max) {
		if (strnlen(base, CG_LABEL_LEN) == CG_LABEL_LEN) {
			*cut = cg_label_copy(base_cut, base);
			base = base_cut;
		}
		out[n++] = base;
	}
	if (s && s->depth > 0) {
		for (int i = 0; i < s->depth && i < CG_LABEL_DEPTH && n < max; i++) {
			out[n++] = s->text[i];
			if (s->cut & 1u << i)
				*cut = 1;
		}
	} else if (n < max) {
		const char *p = atomic_load_explicit(&cg_label_proc, memory_order_acquire);
		if (p)
			out[n++] = p;
	}
	return n;
}

#endif
