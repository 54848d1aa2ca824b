/*
 * shim/hooks/nccl.c -- the exported NCCL teardown calls (nccl-hooks.def):
 * ncclCommDestroy, ncclCommAbort, ncclCommFinalize (issue 33).
 *
 * No NCCL header and no link against NCCL: a communicator is an opaque
 * pointer and ncclResult_t an int-sized enum. Each wrapper forwards to the
 * definition its export hides (nccl-lib.h: dlsym RTLD_NEXT, else the
 * process's libnccl in a local scope), resolved at the first call and kept.
 *
 * Before the call, with the shim ready: CGS027 when live executables hold
 * NCCL kernels (model/nccl.c), written before the call because with NCCL
 * >= 2.26 the call may never return. While dumps can be asked for (dump.h)
 * the thread is noted as blocked in the call, with the communicator, from
 * its entry to its return: a dump names it and the live executables it
 * waits for. After it, the call's record at info
 * (a teardown is a lifecycle call, rare). The arguments, the result and
 * errno are the application's and NCCL's, untouched.
 *
 * A process without libnccl cannot reach these exports by lookup: the
 * shim's dlsym answers a lookup of the names as the process would without
 * the shim (intercept.c). A reference that binds to them anyway at load
 * time (an undefined symbol with no libnccl, which only a weak reference or
 * lazy binding survives) gets what the dynamic loader gives a call to an
 * undefined symbol under lazy binding: its message, "symbol lookup error",
 * and exit status 127 (a weak reference would have read NULL and not
 * called: docs/rules/CGS027.md, "Limits").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../dump.h"
#include "exports.h"
#include "hooks.h"

typedef struct cg_nccl_comm_s *cg_nccl_comm; /* ncclComm_t */
typedef int cg_nccl_result;		     /* ncclResult_t */
typedef cg_nccl_result (*cg_nccl_fn)(cg_nccl_comm);

enum {
#define NCCLHOOK(name, params, args) NH_##name,
#include "../nccl-hooks.def"
#undef NCCLHOOK
	NH_COUNT
};
static const char *const nh_names[NH_COUNT] = {
#define NCCLHOOK(name, params, args) #name,
#include "../nccl-hooks.def"
#undef NCCLHOOK
};
static cg_nccl_fn _Atomic nh_real[NH_COUNT];

/* What the dynamic loader does for a call to an undefined symbol under
 * lazy binding (elf/dl-runtime.c: _dl_signal_error, then exit 127). */
static __attribute__((noreturn, noinline, cold)) void nh_missing(const char *name, void *ret)
{
	Dl_info di;
	const char *obj = dladdr(ret, &di) && di.dli_fname && di.dli_fname[0] ? di.dli_fname : program_invocation_name;
	const char *parts[] = {
	    program_invocation_name, ": symbol lookup error: ", obj, ": undefined symbol: ", name, "\n"};
	for (unsigned i = 0; i < sizeof parts / sizeof *parts; i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			break;
	_exit(127);
}

static cg_nccl_fn nh_fn(int i)
{
	cg_nccl_fn f = atomic_load_explicit(&nh_real[i], memory_order_acquire);
	if (!f) {
		f = (cg_nccl_fn)cg_nccl_next(nh_names[i]);
		if (f)
			atomic_store_explicit(&nh_real[i], f, memory_order_release);
	}
	return f;
}

static int nh_active(void)
{
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (st == CG_SETUP) {
		cg_ensure_init(cgh_wire);
		st = atomic_load_explicit(&cg_state, memory_order_acquire);
	}
	return st == CG_READY && !cg_tls.in_shim;
}

/* CGS027 before the call: the live executables holding NCCL work. */
static __attribute__((noinline)) void nh_teardown_check(const char *api, cg_nccl_comm comm)
{
	struct model_nccl_exec x[CG_NCCL_SHOWN];
	CUgraphExec h[CG_NCCL_SHOWN];
	struct cg_nccl_teardown_ev ev;
	struct cg_verdict v;
	int n = model_nccl_execs(x, CG_NCCL_SHOWN, 0);
	if (n <= 0)
		return;
	memset(&ev, 0, sizeof ev);
	ev.api = api;
	ev.comm = comm;
	ev.n = n;
	ev.shown = n < CG_NCCL_SHOWN ? n : CG_NCCL_SHOWN;
	ev.x = x;
	ev.handles = h;
	for (int i = 0; i < ev.shown; i++) {
		h[i] = x[i].e;
		cg_site_first(x[i].cap_site, ev.where[i], sizeof ev.where[i]);
	}
	if (rules_nccl_teardown(&ev, &v))
		cg_verdict_write(&v, api, 0, SITE_SKIP_PART);
	__asm__ volatile(""); /* not a tail call: the frame count holds */
}

/* The call's record (info), after it returned: emit_call, its extension
 * the communicator and the call site. */
struct nh_rec {
	cg_nccl_comm comm;
	uint32_t site;
};

static void nh_rec_more(struct cg_rec *r, const char *key, const void *arg)
{
	const struct nh_rec *m = arg;
	(void)key;
	rec_hex(r, "comm", (uintptr_t)m->comm);
	rec_site(r, "site", m->site);
}

static __attribute__((noinline)) void nh_record(const char *api, cg_nccl_comm comm, cg_nccl_result rc, uint64_t t0)
{
	struct nh_rec m = {comm, 0};
	uint64_t dur = cg_now_ns() - t0;
	if (!cg_log_on(CG_L_INFO))
		return;
	m.site = cg_site_here(SITE_SKIP_PART);
	emit_call(CG_L_INFO,
		  &(struct ev_call){
		      .api = api, .rc = rc, .has_rc = 1, .dur_ns = dur, .has_dur_ns = 1, .more = {nh_rec_more, &m}});
	__asm__ volatile(""); /* not a tail call: the frame count holds */
}

/* The dump's note of the teardown call (the dump names the thread blocked
 * in it): its name's id, taken once; the part listing the executables
 * holding NCCL work registered, if not yet. */
static _Atomic int nh_dump_id[NH_COUNT];

static __attribute__((noinline)) void nh_block(int i, cg_nccl_comm comm)
{
	const uintptr_t a[4] = {(uintptr_t)comm, 0, 0, 0};
	int id = atomic_load_explicit(&nh_dump_id[i], memory_order_relaxed) - 1;
	if (id < 0) {
		id = cg_dump_call_id(nh_names[i]);
		if (id < 0)
			return;
		atomic_store_explicit(&nh_dump_id[i], id + 1, memory_order_relaxed);
	}
	cgh_nccl_seen();
	cg_dump_blocked(id, CG_BK_COMM, a, cg_site_here(SITE_SKIP_PART));
	__asm__ volatile(""); /* not a tail call: the frame count holds */
}

static cg_nccl_result nh_call(int i, cg_nccl_comm comm, void *ret)
{
	CG_ERRNO_IN;
	cg_nccl_fn f = nh_fn(i);
	cg_nccl_result rc;
	uint64_t t0;
	if (!f)
		nh_missing(nh_names[i], ret);
	if (!nh_active())
		return CG_FWD(f(comm));
	CG_KEEP_ERRNO(nh_teardown_check(nh_names[i], comm));
	if (CG_UNLIKELY(atomic_load_explicit(&cg_dump_on, memory_order_relaxed)))
		CG_KEEP_ERRNO(nh_block(i, comm));
	t0 = cg_now_ns();
	rc = CG_FWD(f(comm));
	if (CG_UNLIKELY(atomic_load_explicit(&cg_dump_on, memory_order_relaxed)))
		cg_dump_unblocked();
	CG_KEEP_ERRNO(nh_record(nh_names[i], comm, rc, t0));
	return rc;
}

#define NCCLHOOK(name, params, args)                                                                                   \
	__attribute__((visibility("default"), noinline)) cg_nccl_result name params                                    \
	{                                                                                                              \
		cg_nccl_result rc = nh_call(NH_##name, comm, __builtin_return_address(0));                             \
		__asm__ volatile("");                                                                                  \
		return rc;                                                                                             \
	}
#include "../nccl-hooks.def"
#undef NCCLHOOK

/* ---- the dump's part (shim/dump.h): executables holding NCCL work ------ */

/* Runs on the dumping thread: the model's lock only tried (the thread that
 * holds it may be the one stuck), the begin sites read with the site
 * table's trylock; no CUDA or NCCL call. */
static void nh_site_list(struct cg_rec *r, const char *key, const void *arg)
{
	(void)rec_site_try(r, key, *(const uint32_t *)arg, 20);
}

static void nh_dump_part(void)
{
	struct model_nccl_exec x[8];
	int n = model_nccl_execs(x, 8, 1);
	if (!n)
		return;
	if (n < 0) {
		cg_dump_text("  executables holding NCCL work: not read (the model's lock stayed held)\n");
		cg_dump_emit(&(struct ev_dump){.part = "nccl_unread"});
		return;
	}
	cg_dump_text("  %d live executable%s hold%s NCCL kernels (NCCL >= 2.26: a communicator teardown waits for "
		     "them; CGS027):\n",
		     n, n == 1 ? "" : "s", n == 1 ? "s" : "");
	for (int i = 0; i < n && i < 8; i++) {
		cg_dump_text("    exec 0x%llx graph 0x%llx capture %llu: %d NCCL kernel%s, %lld launches, device %d\n",
			     (unsigned long long)(uintptr_t)x[i].e, (unsigned long long)(uintptr_t)x[i].g,
			     (unsigned long long)x[i].capture, x[i].nccl, x[i].nccl == 1 ? "" : "s", x[i].launches,
			     x[i].dev);
		cg_dump_emit(&(struct ev_dump){.part = "nccl_exec",
					       .exec = (uintptr_t)x[i].e,
					       .has_exec = 1,
					       .graph = (uintptr_t)x[i].g,
					       .has_graph = 1,
					       .capture = x[i].capture,
					       .has_capture = 1,
					       .nccl_kernels = x[i].nccl,
					       .has_nccl_kernels = 1,
					       .launches = x[i].launches,
					       .has_launches = 1,
					       .dev = x[i].dev,
					       .has_dev = 1,
					       .begin_site = {x[i].cap_site ? nh_site_list : NULL, &x[i].cap_site}});
	}
	if (n > 8)
		cg_dump_text("    and %d more\n", n - 8);
}

void cgh_nccl_seen(void)
{
	static _Atomic int once;
	if (!atomic_exchange(&once, 1))
		cg_dump_add_part(nh_dump_part);
}

void *cg_nccl_export(const char *name)
{
	static void *const tab[NH_COUNT] = {
#define NCCLHOOK(name, params, args) (void *)name,
#include "../nccl-hooks.def"
#undef NCCLHOOK
	};
	for (int i = 0; i < NH_COUNT; i++)
		if (!strcmp(name, nh_names[i]))
			return tab[i];
	return NULL;
}
