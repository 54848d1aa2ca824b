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

#define CG_LABEL_DEPTH 16 /* levels kept; deeper pushes are counted, not kept */
#define CG_LABEL_LEN 64	  /* bytes per label, NUL included */

struct cg_label_stack {
	int depth; /* pushes minus pops; may exceed CG_LABEL_DEPTH */
	char text[CG_LABEL_DEPTH][CG_LABEL_LEN];
};

/* NULL until this thread's first push. */
extern __thread struct cg_label_stack *cg_label_tls;

int cg_label_push(const char *label);
int cg_label_pop(void);

/* What a record of this thread carries, outermost first: CGSHIM_LABEL (the
 * process's label, when set), then the stack's kept levels. Fills at most
 * max pointers (valid until this thread's next push or pop); returns how
 * many. 0 with no TLS access beyond cg_label_tls when nothing is set. */
static inline int cg_labels_get(const char *out[], int max, const char *base)
{
	const struct cg_label_stack *s = cg_label_tls;
	int n = 0;
	if (base && *base && n < max)
		out[n++] = base;
	if (s)
		for (int i = 0; i < s->depth && i < CG_LABEL_DEPTH && n < max; i++)
			out[n++] = s->text[i];
	return n;
}

#endif
