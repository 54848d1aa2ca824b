/*
 * shim/labels.c -- label stacks: the public API, and the shim as an NVTX
 * injection library (labels.h).
 *
 * NVTX (nvtx3, and the older libnvToolsExt) loads the library named by
 * NVTX_INJECTION64_PATH at the first NVTX call and calls its
 * InitializeInjectionNvtx2; the launcher names libcgshim.so there when the
 * variable is unset (an already set one, e.g. Nsight Systems', is left
 * alone). The shim then fills the range push/pop slots of NVTX's core
 * tables: nvtxRangePushA/W/Ex, nvtxRangePop, nvtxDomainRangePushEx/Pop,
 * and string registration so registered messages can be read. Every other
 * NVTX call stays NVTX's no-op. The return values are NVTX's: the level of
 * the range pushed or popped (0-based), negative on error.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "config-values.h"
#include "labels.h"

#define CG_EXPORT __attribute__((visibility("default")))

__thread struct cg_label_stack *cg_label_tls;

static pthread_key_t label_key;
static pthread_once_t label_once = PTHREAD_ONCE_INIT;

static void label_free(void *p)
{
	cg_label_tls = NULL;
	free(p);
}

static void label_key_make(void)
{
	(void)pthread_key_create(&label_key, label_free);
}

static struct cg_label_stack *label_stack(void)
{
	struct cg_label_stack *s = cg_label_tls;
	if (s)
		return s;
	s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	pthread_once(&label_once, label_key_make);
	(void)pthread_setspecific(label_key, s);
	cg_label_tls = s;
	return s;
}

int cg_label_copy(char *dst, const char *t)
{
	size_t n = strnlen(t, CG_LABEL_LEN);
	if (n < CG_LABEL_LEN) {
		memcpy(dst, t, n + 1);
		return 0;
	}
	/* room for the mark and the NUL; t[n], the first byte dropped, must
	 * start a character (not continue one) */
	n = CG_LABEL_LEN - sizeof CG_LABEL_MORE;
	while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80)
		n--;
	memcpy(dst, t, n);
	memcpy(dst + n, CG_LABEL_MORE, sizeof CG_LABEL_MORE);
	return 1;
}

static int cg_label_push(const char *label)
{
	struct cg_label_stack *s;

	if (!(s = label_stack()))
		return -1;
	if (s->depth < CG_LABEL_DEPTH) {
		unsigned bit = 1u << s->depth;
		if (cg_label_copy(s->text[s->depth], label ? label : "?"))
			s->cut |= bit;
		else
			s->cut &= ~bit;
	}
	return ++s->depth;
}

static int cg_label_pop(void)
{
	struct cg_label_stack *s = cg_label_tls;
	if (!s || s->depth <= 0)
		return -1;
	return --s->depth;
}

_Atomic(const char *) cg_label_proc;
/* the last byte of each slot is never written: every slot ends in NUL */
static char label_proc_buf[CG_LABEL_PROC_SLOTS][CG_LABEL_LEN + 1];
static _Atomic unsigned label_proc_next;

/* A cut label is marked by its U+2026 alone: the process label has no
 * record flag of its own. */
static int cg_label_process(const char *label)
{
	char *slot;
	if (!label || !*label) {
		atomic_store_explicit(&cg_label_proc, NULL, memory_order_release);
		return 0;
	}
	slot = label_proc_buf[atomic_fetch_add(&label_proc_next, 1) % CG_LABEL_PROC_SLOTS];
	(void)cg_label_copy(slot, label);
	atomic_store_explicit(&cg_label_proc, slot, memory_order_release);
	return 0;
}

CG_EXPORT int cgshim_label_process(const char *label)
{
	return cg_label_process(label);
}

CG_EXPORT int cgshim_label_push(const char *label)
{
	return cg_label_push(label);
}

CG_EXPORT int cgshim_label_pop(void)
{
	return cg_label_pop();
}

/* ---- NVTX ---------------------------------------------------------------- */

/* A wide string as ASCII: other characters become '?'. One byte more than
 * a label holds, so that an over-long one is cut and marked. */
static int push_wide(const wchar_t *w)
{
	char buf[CG_LABEL_LEN + 1];
	size_t i = 0;
	for (; w && w[i] && i < sizeof buf - 1; i++)
		buf[i] = w[i] > 0 && w[i] < 128 ? (char)w[i] : '?';
	buf[i] = '\0';
	return cg_label_push(buf);
}

/* A registered string is the copy nvtx_register_a/w made. */
static int push_attr(const nvtxEventAttributes_t *a)
{
	if (!a)
		return cg_label_push("?");
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return cg_label_push(a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return push_wide(a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return cg_label_push(a->message.registered ? (const char *)a->message.registered : "?");
	default:
		return cg_label_push("?");
	}
}

/* NVTX returns the level of the range started or ended, from 0. */
static int nvtx_push_a(const char *m)
{
	int d = cg_label_push(m);
	return d < 0 ? d : d - 1;
}

static int nvtx_push_w(const wchar_t *m)
{
	int d = push_wide(m);
	return d < 0 ? d : d - 1;
}

static int nvtx_push_ex(const nvtxEventAttributes_t *a)
{
	int d = push_attr(a);
	return d < 0 ? d : d - 1;
}

static int nvtx_pop(void)
{
	return cg_label_pop(); /* the level of the range ended: the new depth */
}

static int nvtx_domain_push_ex(nvtxDomainHandle_t dom, const nvtxEventAttributes_t *a)
{
	(void)dom;
	return nvtx_push_ex(a);
}

static int nvtx_domain_pop(nvtxDomainHandle_t dom)
{
	(void)dom;
	return nvtx_pop();
}

/* A registered string lives as long as the process (NVTX has no
 * unregister); the application registers each of its few names once. */
static nvtxStringHandle_t nvtx_register_a(nvtxDomainHandle_t dom, const char *s)
{
	char *c;
	(void)dom;
	c = strndup(s ? s : "?", CG_LABEL_LEN); /* over-long: cut and marked at the push */
	return (nvtxStringHandle_t)c;
}

static nvtxStringHandle_t nvtx_register_w(nvtxDomainHandle_t dom, const wchar_t *w)
{
	char buf[CG_LABEL_LEN + 1];
	size_t i = 0;
	(void)dom;
	for (; w && w[i] && i < sizeof buf - 1; i++)
		buf[i] = w[i] > 0 && w[i] < 128 ? (char)w[i] : '?';
	buf[i] = '\0';
	return (nvtxStringHandle_t)strdup(buf);
}

static void set_slot(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer f)
{
	if (t && id < size && t[id])
		*t[id] = f;
}

/* The entry point NVTX looks up in the injection library. 1: injected; 0:
 * NVTX stays a no-op (the shim is off, or the tables are not there). */
CG_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	NvtxFunctionTable core = NULL, core2 = NULL;
	unsigned n_core = 0, n_core2 = 0;

	const char *off = getenv("CGSHIM_DISABLE"); /* NVTX may come before the shim's init */

	if (!get || (off && cg_value_bool(off) == 1))
		return 0;
	cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
	if (!cb || !cb->GetModuleFunctionTable || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n_core) ||
	    !core)
		return 0;
	set_slot(core, n_core, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)nvtx_push_a);
	set_slot(core, n_core, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)nvtx_push_w);
	set_slot(core, n_core, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)nvtx_push_ex);
	set_slot(core, n_core, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)nvtx_pop);
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n_core2) && core2) {
		set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)nvtx_domain_push_ex);
		set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)nvtx_domain_pop);
		set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)nvtx_register_a);
		set_slot(core2, n_core2, NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)nvtx_register_w);
	}
	return 1;
}
