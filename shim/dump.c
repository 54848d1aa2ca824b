/*
 * shim/dump.c -- "where is it stuck?" (issue 33; docs/dump.md).
 *
 * What each thread records, at no cost on the launch path (doors.h's
 * slots, written by the thread alone with relaxed stores): its last hooked
 * call; the blocking call it is in (the BLOCK rows of hooks.def: the
 * synchronize calls, the synchronous copies and memsets; the NCCL teardown
 * calls: the call, its arguments, entry time and call site with Python
 * frames, taken at entry, because nothing can read another thread's stack
 * later); its last kernel
 * and graph launches with their streams (no clock read).
 *
 * Who writes a dump: one watchdog thread ("cgshim-watch"), started by
 * init_once when CGSHIM_DUMP_SIGNAL or CGSHIM_STALL_S asks for dumps. It
 * makes no CUDA call while it watches: it sleeps on a semaphore, wakes
 * every CGSHIM_STALL_S/4 (10 ms..1 s; 1 s without a threshold), scans the
 * slots for a blocking call older than the threshold (one dump per such
 * call) and re-takes the signal (below). The signal handler only posts the
 * semaphore (async-signal-safe) and hands the signal on to the
 * program's own handler; the dump is written by the watchdog. At exit, the
 * exit handler writes one when captures are still open.
 *
 * The signal: the program's action found when the shim takes the signal is
 * kept and called after the poke, as the kernel would have called it
 * (crashlog.c's cg_signal_chain); SIG_DFL (which would end the process) and
 * SIG_IGN call nothing: asking for a dump does not kill. A program that
 * installs its own handler later replaces the shim's; the watchdog sees
 * that within a second (one sigaction(2) read a second), keeps the new
 * action as the one to chain to and takes the signal back. Not covered: a
 * handler installed between that read and the write back (two syscalls)
 * is replaced unseen; a program that reads its action back during the
 * second after installing it sees its own, later the shim's.
 *
 * What a dump may wait for: no lock another thread may hold forever. The
 * slots are read without a lock (a blocking call's fields under its
 * sequence count; a launch entry may pair one launch's stream with the
 * next one's object); the captures, the site table and kernel names are
 * read under trylocks retried for at most DUMP_LOCK_MS each (a part whose
 * lock stayed held says "unread"); the driver is asked only
 * cuStreamQuery of a stream no live capture holds and that is not a
 * default stream (capture-safe, never blocks: it answers busy or idle),
 * cuGraphGetNodes of a capture's graph (its node count so far) and
 * the name of a launched function (cg_launch_name: cuFuncGetName, or
 * cuKernelGetName for the runtime's CUkernel; only while no module was unloaded
 * in the process: a stale handle is never handed over), and these stop
 * after DUMP_DRIVER_NS. The records are written by write(2) (warn level:
 * no batch); the human-readable block goes to stderr part by part.
 *
 * Fork: the child gets a semaphore of its own and no watchdog until its first
 * blocking call (a thread cannot be started safely in the fork handler).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgshim/record.h"
#include "config.h"
#include "crashlog.h"
#include "doors.h"
#include "dump.h"
#include "emit.h"
#include "hot.h"
#include "log.h"
#include "model.h"
#include "nodes.h"
#include "resolve.h"
#include "site.h"
#include "sink.h"

#define DUMP_CAPS 32
#define DUMP_STREAMS 32
#define DUMP_PER_STREAM 4
#define DUMP_TEXT (32u << 10)
#define DUMP_LOCK_MS 20
#define DUMP_DRIVER_NS 300000000ull
#define DUMP_PARTS 4

_Atomic int cg_dump_on;
static uint64_t stall_ns;
static int dump_sig;
/* The signal handler wakes the watchdog with sem_post (async-signal-safe).
 * A semaphore, not a pipe: a program that closes every descriptor (a
 * daemon closing 3..1023) and opens its own files would otherwise hand the
 * watchdog its file to poll, and the handler its file to write into
 * (host-fd_identity's daemon case). wd_sem_ok: the semaphore exists. */
static sem_t wd_sem;
static atomic_int wd_sem_ok;

static int wd_sem_open(void)
{
	int ok = sem_init(&wd_sem, 0, 0) == 0;
	atomic_store(&wd_sem_ok, ok);
	return ok ? 0 : -1;
}
static _Atomic int wd_running, wd_stop;
/* The program's action to chain to: two copies, the handler reads the one
 * prev_i names (the watchdog writes the other, then flips). */
static struct sigaction prev[2];
static _Atomic int prev_i, prev_spent;
static _Atomic int dump_busy, dump_seq;
static cg_dump_part_fn parts[DUMP_PARTS];
static _Atomic int nparts;

/* ---- the dump being written (one at a time: dump_busy) ----------------- */
static struct {
	int n;
	const char *reason;
	uint64_t t0;
	char text[DUMP_TEXT];
	size_t tn;
	int site_lock_busy; /* the site table's lock stayed held once: not tried again */
	int norec;	    /* the log could not be opened without waiting: the block only */
} cur;

struct dthread {
	int tid, hid, bhid, kind;
	uint64_t since;
	uintptr_t a[4];
	uint32_t site;
	unsigned kn, gn;
	struct {
		uintptr_t s, o;
		long long n;
	} k[CG_WORK_RING], g[CG_WORK_RING];
};
static struct dthread th[CG_CALL_SLOTS];
static int nth;

void cg_dump_text(const char *fmt, ...)
{
	va_list ap;
	int n;
	if (cur.tn >= sizeof cur.text - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(cur.text + cur.tn, sizeof cur.text - cur.tn, fmt, ap);
	va_end(ap);
	if (n > 0)
		cur.tn = cur.tn + (size_t)n < sizeof cur.text ? cur.tn + (size_t)n : sizeof cur.text - 1;
}

/* The block so far to stderr (part by part: a dump cut short still says
 * what it had). */
static void dump_text_flush(void)
{
	size_t off = 0;
	while (off < cur.tn) {
		ssize_t w = write(2, cur.text + off, cur.tn - off);
		if (w <= 0 && errno != EINTR)
			break;
		if (w > 0)
			off += (size_t)w;
	}
	cur.tn = 0;
}

void cg_dump_emit(struct ev_dump *f)
{
	/* the text format: the block on stderr is the dump */
	if (cg_cfg.log_format != CG_FMT_JSONL || cur.norec)
		return;
	f->dump = cur.n;
	f->reason = cur.reason;
	emit_dump(CG_L_WARN, f);
}

/* A site as a list field, read with the site table's trylock (an empty
 * list is left out when it stayed held). */
struct site_arg {
	uint32_t site;
};

static void site_list(struct cg_rec *r, const char *key, const void *arg)
{
	const struct site_arg *a = arg;
	if (rec_site_try(r, key, a->site, DUMP_LOCK_MS) < 0)
		cur.site_lock_busy = 1;
}

int cg_dump_add_part(cg_dump_part_fn fn)
{
	int i = atomic_fetch_add(&nparts, 1);
	if (i >= DUMP_PARTS)
		return -1;
	parts[i] = fn;
	return 0;
}

/* Blocking calls outside hooks.def (cg_dump_call_id): id HID_COUNT + i. */
#define DUMP_OTHER_CALLS 8
static const char *_Atomic other_calls[DUMP_OTHER_CALLS];

int cg_dump_call_id(const char *name)
{
	for (int i = 0; i < DUMP_OTHER_CALLS; i++) {
		const char *none = NULL;
		if (atomic_compare_exchange_strong(&other_calls[i], &none, name) || none == name)
			return HID_COUNT + i;
	}
	return -1;
}

static const char *hid_name(int hid)
{
	const char *nm;
	if (hid >= 0 && hid < HID_COUNT)
		return cg_routes[hid].name;
	if (hid >= HID_COUNT && hid < HID_COUNT + DUMP_OTHER_CALLS && (nm = atomic_load(&other_calls[hid - HID_COUNT])))
		return nm;
	return "?";
}

static void thread_name_of(int tid, char out[16])
{
	char path[64];
	int fd;
	ssize_t n;
	out[0] = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, 15);
	close(fd);
	out[n > 0 ? n : 0] = 0;
	if (n > 0 && out[n - 1] == '\n')
		out[n - 1] = 0;
}

/* ---- reading the slots -------------------------------------------------- */
static void snap_slot(struct cg_call_slot *s, struct dthread *t)
{
	t->bhid = -1;
	for (int tries = 0; tries < 4; tries++) {
		unsigned q1 = atomic_load_explicit(&s->bseq, memory_order_acquire), q2;
		int bh;
		if (q1 & 1)
			continue;
		bh = atomic_load_explicit(&s->bhid, memory_order_relaxed);
		t->since = atomic_load_explicit(&s->bsince, memory_order_relaxed);
		t->kind = atomic_load_explicit(&s->bkind, memory_order_relaxed);
		for (int i = 0; i < 4; i++)
			t->a[i] = atomic_load_explicit(&s->barg[i], memory_order_relaxed);
		t->site = atomic_load_explicit(&s->bsite, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		q2 = atomic_load_explicit(&s->bseq, memory_order_relaxed);
		if (q1 == q2) {
			t->bhid = bh;
			break;
		}
	}
	t->kn = atomic_load_explicit(&s->kn, memory_order_acquire);
	t->gn = atomic_load_explicit(&s->gn, memory_order_acquire);
	for (int i = 0; i < CG_WORK_RING; i++) {
		t->k[i].s = atomic_load_explicit(&s->kern[i].stream, memory_order_relaxed);
		t->k[i].o = atomic_load_explicit(&s->kern[i].obj, memory_order_relaxed);
		t->g[i].s = atomic_load_explicit(&s->graph[i].stream, memory_order_relaxed);
		t->g[i].o = atomic_load_explicit(&s->graph[i].obj, memory_order_relaxed);
		t->g[i].n = atomic_load_explicit(&s->graph[i].n, memory_order_relaxed);
	}
}

static void snap_threads(void)
{
	int hi = atomic_load_explicit(&cg_call_slots_hi, memory_order_acquire);
	nth = 0;
	for (int k = 0; k < hi && k < CG_CALL_SLOTS; k++) {
		struct cg_call_slot *s = &cg_call_slots[k];
		struct dthread *t = &th[nth];
		t->tid = atomic_load_explicit(&s->tid, memory_order_acquire);
		if (!t->tid)
			continue;
		t->hid = atomic_load_explicit(&s->hid, memory_order_relaxed);
		snap_slot(s, t);
		nth++;
	}
}

/* ---- the parts ---------------------------------------------------------- */
/* The blocked call waits on a stream (its a[0]): a stream synchronize, a
 * synchronous copy or memset (on the legacy or per-thread stream). */
static int stream_arg(const struct dthread *t)
{
	return t->kind == CG_BK_STREAM || t->kind == CG_BK_COPY || t->kind == CG_BK_SET;
}

/* A copy's direction by its call's name: htod, dtoh, dtod, else any
 * (cuMemcpy: the driver tells by the pointers). */
static const char *copy_direction(const char *call)
{
	return strstr(call, "HtoD") ? "htod" : strstr(call, "DtoH") ? "dtoh" : strstr(call, "DtoD") ? "dtod" : "any";
}

/* A memset's element size by its call's name (cuMemsetD8, D16, D32). */
static unsigned set_elem(const char *call)
{
	return strstr(call, "D32") ? 4 : strstr(call, "D16") ? 2 : 1;
}

/* The stream of a synchronous copy or memset, as the text names it. */
static const char *stream_word(uintptr_t s)
{
	return s == 0 ? "legacy" : s == 2 ? "per-thread" : NULL;
}

/* The arguments of t's blocked call, as in a C call (the text block). */
static void call_args_text(const struct dthread *t, const char *call)
{
	const char *sw = stream_word(t->a[0]);
	switch (t->kind) {
	case CG_BK_STREAM:
		cg_dump_text("stream=0x%lx", (unsigned long)t->a[0]);
		break;
	case CG_BK_EVENT:
		cg_dump_text("event=0x%lx", (unsigned long)t->a[0]);
		break;
	case CG_BK_CTX:
		if (t->a[0])
			cg_dump_text("ctx=0x%lx", (unsigned long)t->a[0]);
		break;
	case CG_BK_COPY:
		cg_dump_text("dst=0x%lx, src=0x%lx, bytes=%lu; %s, stream=%s", (unsigned long)t->a[2],
			     (unsigned long)t->a[3], (unsigned long)t->a[1], copy_direction(call), sw ? sw : "?");
		break;
	case CG_BK_SET:
		cg_dump_text("dst=0x%lx, value=0x%lx, count=%lu; bytes=%lu, stream=%s", (unsigned long)t->a[2],
			     (unsigned long)t->a[3], (unsigned long)t->a[1], (unsigned long)t->a[1] * set_elem(call),
			     sw ? sw : "?");
		break;
	case CG_BK_COMM:
		cg_dump_text("comm=0x%lx", (unsigned long)t->a[0]);
		break;
	}
}

/* A teardown call blocked on comm: the live executables holding NCCL work
 * it waits for (NCCL >= 2.26), their handles in hx (the model's lock only
 * tried: -1 unread). */
static int comm_waits(char hx[][24], int max, const char **hp)
{
	struct model_nccl_exec x[8];
	int n = model_nccl_execs(x, max < 8 ? max : 8, 1);
	for (int i = 0; i < n && i < max && i < 8; i++) {
		snprintf(hx[i], sizeof hx[0], "0x%lx", (unsigned long)(uintptr_t)x[i].e);
		hp[i] = hx[i];
	}
	return n;
}

static void part_threads(uint64_t now)
{
	static char lines[4096];
	int blocked = 0;
	for (int i = 0; i < nth; i++) {
		struct dthread *t = &th[i];
		struct site_arg sa = {t->site};
		char name[16];
		double secs;
		if (t->bhid < 0)
			continue;
		blocked++;
		secs = now > t->since ? (double)(now - t->since) / 1e9 : 0;
		thread_name_of(t->tid, name);
		lines[0] = 0;
		if (t->site && !cur.site_lock_busy &&
		    cg_site_lines_try(t->site, "      ", lines, sizeof lines, DUMP_LOCK_MS) < 0)
			cur.site_lock_busy = 1;
		const char *call = hid_name(t->bhid);
		int copy = t->kind == CG_BK_COPY, set = t->kind == CG_BK_SET, comm = t->kind == CG_BK_COMM;
		char hx[8][24];
		const char *hp[8];
		struct emit_strs ws = {hp, 0};
		int nw = comm ? comm_waits(hx, 8, hp) : 0;
		ws.n = nw > 8 ? 8 : nw > 0 ? nw : 0;
		cg_dump_emit(&(struct ev_dump){
		    .part = "thread",
		    .thread = t->tid,
		    .has_thread = 1,
		    .thread_name = name,
		    .call = call,
		    .stream = t->a[0],
		    .has_stream = stream_arg(t),
		    .event = t->a[0],
		    .has_event = t->kind == CG_BK_EVENT,
		    .ctx = t->a[0],
		    .has_ctx = t->a[0] && t->kind == CG_BK_CTX,
		    .comm = t->a[0],
		    .has_comm = comm,
		    .direction = copy ? copy_direction(call) : NULL,
		    .bytes = copy ? t->a[1] : t->a[1] * set_elem(call),
		    .has_bytes = copy || set,
		    .dst = t->a[2],
		    .has_dst = copy || set,
		    .src = t->a[3],
		    .has_src = copy,
		    .waits_for = {comm && nw > 0 ? emit_str_list : NULL, &ws},
		    .waits_for_unread = 1,
		    .has_waits_for_unread = comm && nw < 0,
		    .blocked_ms = (long long)(secs * 1000),
		    .has_blocked_ms = 1,
		    .site = {t->site && !cur.site_lock_busy ? site_list : NULL, &sa},
		    .site_unread = 1,
		    .has_site_unread = t->site && cur.site_lock_busy,
		});
		cg_dump_text("  thread %d (%s) blocked %.3f s in %s(", t->tid, name[0] ? name : "-", secs, call);
		call_args_text(t, call);
		cg_dump_text(")\n");
		if (comm && nw < 0)
			cg_dump_text("      waits for: unread (the model's lock stayed held)\n");
		else if (comm && nw == 0)
			cg_dump_text("      no live executable holds NCCL work the shim saw\n");
		else if (comm) {
			cg_dump_text("      waits (NCCL >= 2.26) for the %d live executable%s holding NCCL work:", nw,
				     nw == 1 ? "" : "s");
			for (int k = 0; k < ws.n; k++)
				cg_dump_text(" exec %s", hp[k]);
			cg_dump_text("%s; destroy them first (CGS027)\n", nw > ws.n ? " ..." : "");
		}
		cg_dump_text("%s", lines[0]   ? lines
				   : !t->site ? "      (no site recorded)\n"
					      : "      (site unread: the shim's site table stayed locked)\n");
	}
	if (!blocked)
		cg_dump_text("  no thread is blocked in a CUDA call the shim sees\n");
	/* The others' last hooked call: a thread polling cuEventQuery or
	 * cuStreamQuery is in no call, but that is where it spins. */
	for (int i = 0; i < nth; i++) {
		if (th[i].bhid >= 0 || th[i].hid < 0)
			continue;
		cg_dump_emit(&(struct ev_dump){
		    .part = "idle_thread", .thread = th[i].tid, .has_thread = 1, .last_call = hid_name(th[i].hid)});
		cg_dump_text("  thread %d not in a CUDA call; last call %s\n", th[i].tid, hid_name(th[i].hid));
	}
}

static struct model_live_cap caps[DUMP_CAPS];
static int ncap;

static int driver_time_left(void)
{
	return cg_now_ns() - cur.t0 < DUMP_DRIVER_NS;
}

/* Returns the live captures, -1 when unread. */
static int part_captures(uint64_t now)
{
	static const char *const modes[] = {"global", "thread_local", "relaxed"};
	static char lines[2048];
	ncap = model_capture_live_try(caps, DUMP_CAPS);
	if (ncap < 0) {
		cg_dump_emit(&(struct ev_dump){.part = "captures_unread"}); /* the capture lock stayed held */
		cg_dump_text("  live captures: unread (the shim's capture lock stayed held)\n");
		ncap = 0;
		return -1;
	}
	if (ncap > DUMP_CAPS)
		ncap = DUMP_CAPS;
	for (int k = 0; k < ncap; k++) {
		struct model_live_cap *c = &caps[k];
		struct site_arg sa = {c->site};
		size_t nodes = 0;
		int have_nodes = c->graph && drv_cuGraphGetNodes && driver_time_left() &&
				 drv_cuGraphGetNodes(c->graph, NULL, &nodes) == CUDA_SUCCESS;
		const char *mode = c->mode >= 0 && c->mode <= 2 ? modes[c->mode] : "?";
		lines[0] = 0;
		if (c->site && !cur.site_lock_busy &&
		    cg_site_lines_try(c->site, "      ", lines, sizeof lines, DUMP_LOCK_MS) < 0)
			cur.site_lock_busy = 1;
		cg_dump_emit(&(struct ev_dump){
		    .part = "capture",
		    .capture = c->id,
		    .has_capture = 1,
		    .stream = (uintptr_t)c->stream,
		    .has_stream = 1,
		    .mode = mode,
		    .begin_thread = c->tid,
		    .has_begin_thread = 1,
		    .begin_thread_name = c->tname,
		    .graph = (uintptr_t)c->graph,
		    .has_graph = 1,
		    .nodes = nodes,
		    .has_nodes = have_nodes,
		    .age_ms = now > c->t0 ? (long long)((now - c->t0) / 1000000) : 0,
		    .has_age_ms = 1,
		    .invalidated = 1,
		    .has_invalidated = c->invalid != 0,
		    .begin_site = {c->site && !cur.site_lock_busy ? site_list : NULL, &sa},
		});
		cg_dump_text("  capture %llu on stream 0x%lx (%s, begun by thread %d %s %.3f s ago)%s, ",
			     (unsigned long long)c->id, (unsigned long)(uintptr_t)c->stream, mode, c->tid, c->tname,
			     now > c->t0 ? (double)(now - c->t0) / 1e9 : 0, c->invalid ? " invalidated" : "");
		if (have_nodes)
			cg_dump_text("%zu nodes so far\n", nodes);
		else
			cg_dump_text("nodes unknown\n");
		cg_dump_text("%s", lines);
	}
	return ncap;
}

static int capturing(uintptr_t s)
{
	for (int k = 0; k < ncap; k++)
		if ((uintptr_t)caps[k].stream == s)
			return 1;
	return 0;
}

/* A kernel's name: only while no module or library was unloaded in the
 * process (the handle is then still the driver's), else NULL. */
static const char *kernel_name(uintptr_t f)
{
	if (!f || nodes_unloads() || !driver_time_left())
		return NULL;
	return cg_launch_name((CUfunction)f);
}

/* A stream's state: "capturing" (not asked: a query of a capturing stream
 * invalidates its capture), "default" (the legacy or per-thread stream:
 * not asked, it needs the caller's context and joins blocking captures),
 * else cuStreamQuery's answer, "busy" or "idle". */
static const char *stream_state(uintptr_t s)
{
	CUresult rc;
	if (capturing(s))
		return "capturing";
	if (s <= 2)
		return "default";
	if (!real_cuStreamQuery || !driver_time_left())
		return "unasked";
	rc = real_cuStreamQuery((CUstream)s);
	return rc == CUDA_SUCCESS ? "idle" : rc == CUDA_ERROR_NOT_READY ? "busy" : "error";
}

static void part_streams(void)
{
	uintptr_t ss[DUMP_STREAMS];
	int ns = 0;
	/* the streams named: blocked on, then given work */
	for (int i = 0; i < nth; i++) {
		uintptr_t cand[1 + 2 * CG_WORK_RING];
		int nc = 0;
		if (th[i].bhid >= 0 && stream_arg(&th[i]))
			cand[nc++] = th[i].a[0];
		for (unsigned j = 0; j < CG_WORK_RING; j++) {
			unsigned gx = (th[i].gn - 1 - j) % CG_WORK_RING, kx = (th[i].kn - 1 - j) % CG_WORK_RING;
			if (j < th[i].gn && th[i].g[gx].o) /* object 0: its stream was destroyed */
				cand[nc++] = th[i].g[gx].s;
			if (j < th[i].kn && th[i].k[kx].o)
				cand[nc++] = th[i].k[kx].s;
		}
		for (int c = 0; c < nc; c++) {
			int seen = 0;
			for (int k = 0; k < ns && !seen; k++)
				seen = ss[k] == cand[c];
			if (!seen && ns < DUMP_STREAMS)
				ss[ns++] = cand[c];
		}
	}
	for (int k = 0; k < ns; k++) {
		static char gl[DUMP_PER_STREAM][96], kl[DUMP_PER_STREAM][200];
		const char *gp[DUMP_PER_STREAM], *kp[DUMP_PER_STREAM];
		struct emit_strs gs = {gp, 0}, ks = {kp, 0};
		const char *st = stream_state(ss[k]);
		cg_dump_text("  stream 0x%lx: %s\n", (unsigned long)ss[k], st);
		for (int i = 0; i < nth; i++)
			for (unsigned j = 0; j < CG_WORK_RING && j < th[i].gn && gs.n < DUMP_PER_STREAM; j++) {
				unsigned x = (th[i].gn - 1 - j) % CG_WORK_RING;
				if (th[i].g[x].s != ss[k] || !th[i].g[x].o)
					continue;
				snprintf(gl[gs.n], sizeof gl[0], "exec=0x%lx launch=%lld thread=%d",
					 (unsigned long)th[i].g[x].o, th[i].g[x].n, th[i].tid);
				cg_dump_text("    graph launch %s%s\n", gl[gs.n],
					     gs.n == 0 && !strcmp(st, "busy") ? " (last given; not complete)" : "");
				gp[gs.n] = gl[gs.n];
				gs.n++;
			}
		for (int i = 0; i < nth; i++)
			for (unsigned j = 0; j < CG_WORK_RING && j < th[i].kn && ks.n < DUMP_PER_STREAM; j++) {
				unsigned x = (th[i].kn - 1 - j) % CG_WORK_RING;
				const char *nm;
				if (th[i].k[x].s != ss[k] || !th[i].k[x].o)
					continue;
				nm = kernel_name(th[i].k[x].o);
				snprintf(kl[ks.n], sizeof kl[0], "%s function=0x%lx thread=%d", nm ? nm : "?",
					 (unsigned long)th[i].k[x].o, th[i].tid);
				cg_dump_text("    kernel %s\n", kl[ks.n]);
				kp[ks.n] = kl[ks.n];
				ks.n++;
			}
		cg_dump_emit(&(struct ev_dump){
		    .part = "stream",
		    .stream = ss[k],
		    .has_stream = 1,
		    .state = st,
		    .graph_launches = EMIT_STRS(&gs),
		    .kernels = EMIT_STRS(&ks),
		    .completed = !strcmp(st, "idle")   ? "all"
				 : !strcmp(st, "busy") ? "not_all"
						       : "unknown",
		});
	}
	if (!ns)
		cg_dump_text("  no stream was given work the shim saw\n");
}

/* ---- one dump ------------------------------------------------------------ */
int cg_dump_now(const char *reason)
{
	int idle = 0, got = 0, n;
	uint64_t now;
	if (!atomic_load(&cg_dump_on))
		return -1;
	for (int k = 0; !got && k < 200; k++) {
		struct timespec pause = {0, 1000000};
		idle = 0;
		got = atomic_compare_exchange_strong(&dump_busy, &idle, 1);
		if (!got)
			nanosleep(&pause, NULL);
	}
	if (!got)
		return -1;
	cg_tls.in_shim++;  /* the driver queries below pass through the hooks */
	cg_sink_nowait(1); /* a log not yet open is opened with a trylock */
	n = atomic_fetch_add(&dump_seq, 1) + 1;
	cur.n = n;
	cur.reason = reason;
	cur.t0 = now = cg_now_ns();
	cur.tn = 0;
	cur.site_lock_busy = 0;
	cur.norec = cg_log_on(CG_L_WARN) && cg_cfg.log_format == CG_FMT_JSONL && cg_sink_open_nowait() < 0;
	snap_threads();
	cg_dump_text("==cgshim== dump %d (%s), pid %d: where is it stuck?\n", n, reason, (int)getpid());
	cg_dump_emit(&(struct ev_dump){.part = "head",
				       .threads = nth,
				       .has_threads = 1,
				       .stall_ms = stall_ns / 1000000,
				       .has_stall_ms = stall_ns != 0});
	cg_dump_text(" threads in CUDA calls:\n");
	part_threads(now);
	dump_text_flush();
	cg_dump_text(" live captures:\n");
	if (part_captures(now) == 0)
		cg_dump_text("  none\n");
	dump_text_flush();
	cg_dump_text(" streams (last work given, newest first):\n");
	part_streams();
	dump_text_flush();
	for (int i = 0; i < atomic_load(&nparts) && i < DUMP_PARTS; i++)
		if (parts[i])
			parts[i]();
	now = cg_now_ns();
	cg_dump_emit(&(struct ev_dump){.part = "end",
				       .dump_us = (long long)((now - cur.t0) / 1000),
				       .has_dump_us = 1,
				       .sites_unread = 1,
				       .has_sites_unread = cur.site_lock_busy});
	if (cur.norec)
		cg_dump_text("  (no records: the log's lock stayed held)\n");
	cg_dump_text("==cgshim== end of dump %d (%.1f ms)\n", n, (double)(now - cur.t0) / 1e6);
	dump_text_flush();
	cg_sink_nowait(0);
	cg_tls.in_shim--;
	atomic_store(&dump_busy, 0);
	return n;
}

/* ---- the watchdog ---------------------------------------------------------- */
static void dump_on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	if (atomic_load_explicit(&wd_sem_ok, memory_order_relaxed))
		sem_post(&wd_sem); /* EOVERFLOW: a dump is asked already */
	cg_signal_chain(sig, &prev[atomic_load(&prev_i)], &prev_spent, si, uc);
	errno = saved;
}

/* Take the signal, or take it back from a handler installed since. */
static void dump_sig_take(void)
{
	struct sigaction now_act, ours;
	int n;
	if (!dump_sig || sigaction(dump_sig, NULL, &now_act) != 0)
		return;
	if ((now_act.sa_flags & SA_SIGINFO) && now_act.sa_sigaction == dump_on_signal)
		return;
	n = !atomic_load(&prev_i);
	prev[n] = now_act;
	atomic_store(&prev_spent, 0);
	atomic_store(&prev_i, n);
	memset(&ours, 0, sizeof ours);
	ours.sa_sigaction = dump_on_signal;
	/* A program's handler keeps its own SA_RESTART choice (its system
	 * calls see EINTR as bare); with none, the dump's signal interrupts
	 * nothing. */
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK |
			(cg_signal_has_handler(&now_act, NULL) ? (now_act.sa_flags & SA_RESTART) : SA_RESTART);
	sigemptyset(&ours.sa_mask);
	sigaction(dump_sig, &ours, NULL);
}

/* One dump per blocking call that passed the threshold: the slot's
 * sequence count names the call. */
static unsigned stall_seq[CG_CALL_SLOTS];
static int stall_tid[CG_CALL_SLOTS];

/* A call blocked for half the threshold when a stall dump is written is
 * named in that dump, and counted as dumped: calls stuck together (a few
 * ms apart) make one dump, not one each (dump-stall failed on two). */
static void stall_check(void)
{
	uint64_t now = cg_now_ns();
	int hi = atomic_load_explicit(&cg_call_slots_hi, memory_order_acquire), fire = 0;
	unsigned near_q[CG_CALL_SLOTS];
	int near_tid[CG_CALL_SLOTS], near[CG_CALL_SLOTS], nn = 0;
	for (int k = 0; k < hi && k < CG_CALL_SLOTS; k++) {
		struct cg_call_slot *s = &cg_call_slots[k];
		int tid = atomic_load_explicit(&s->tid, memory_order_acquire);
		unsigned q = atomic_load_explicit(&s->bseq, memory_order_acquire);
		uint64_t since;
		if (!tid || (q & 1) || atomic_load_explicit(&s->bhid, memory_order_relaxed) < 0)
			continue;
		since = atomic_load_explicit(&s->bsince, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&s->bseq, memory_order_relaxed) != q)
			continue;
		if (now <= since || (stall_seq[k] == q && stall_tid[k] == tid))
			continue;
		if (now - since > stall_ns)
			fire = 1;
		if (now - since > stall_ns / 2) {
			near[nn] = k;
			near_q[nn] = q;
			near_tid[nn++] = tid;
		}
	}
	if (!fire)
		return;
	for (int i = 0; i < nn; i++) {
		stall_seq[near[i]] = near_q[i];
		stall_tid[near[i]] = near_tid[i];
	}
	cg_dump_now("stall");
}

static void *wd_main(void *arg)
{
	sigset_t all;
	int period_ms = 1000;
	uint64_t taken = 0;
	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* the dump's signal goes to a program thread */
	pthread_setname_np(pthread_self(), "cgshim-watch");
	if (stall_ns) {
		uint64_t p = stall_ns / 4 / 1000000;
		period_ms = p < 10 ? 10 : p > 1000 ? 1000 : (int)p;
	}
	while (!atomic_load(&wd_stop)) {
		struct timespec until;
		uint64_t now;
		int r;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)period_ms % 1000 * 1000000L;
		until.tv_sec += period_ms / 1000 + until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		r = sem_timedwait(&wd_sem, &until);
		if (atomic_load(&wd_stop) || !cg_ready())
			break;
		if (r == 0) {
			while (sem_trywait(&wd_sem) == 0) {
				/* signals that came together make one dump */
			}
			cg_dump_now("signal");
		}
		if (stall_ns)
			stall_check();
		now = cg_now_ns();
		if (now - taken >= 1000000000ull) {
			dump_sig_take();
			taken = now;
		}
	}
	atomic_store(&wd_running, 0);
	return NULL;
}

static void wd_start(void)
{
	pthread_t t;
	pthread_attr_t a;
	int idle = 0;
	if (atomic_load(&wd_stop) || !atomic_load(&wd_sem_ok) || !atomic_compare_exchange_strong(&wd_running, &idle, 1))
		return;
	if (pthread_attr_init(&a) != 0) {
		atomic_store(&wd_running, 0);
		return;
	}
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256u << 10);
	if (pthread_create(&t, &a, wd_main, NULL) != 0)
		atomic_store(&wd_running, 0);
	pthread_attr_destroy(&a);
}

/* CGSHIM_STALL_S: a decimal number of seconds; 0 when empty or malformed
 * (with one warning). */
static uint64_t stall_parse(const char *v)
{
	char *end = NULL;
	double s;
	if (!v || !*v)
		return 0;
	errno = 0;
	s = strtod(v, &end);
	if (errno || end == v || *end || s < 0 || s > 1e6) {
		cg_warn("CGSHIM_STALL_S=%s is not a number of seconds: no stall dumps", v);
		return 0;
	}
	return (uint64_t)(s * 1e9);
}

void cg_dump_install(void)
{
	int saved = errno;
	stall_ns = stall_parse(cg_cfg.stall_s);
	dump_sig = (int)cg_cfg.dump_signal;
	if (dump_sig == SIGKILL || dump_sig == SIGSTOP || dump_sig >= NSIG)
		dump_sig = 0;
	if ((!dump_sig && !stall_ns) || wd_sem_open() != 0) {
		errno = saved;
		return;
	}
	atomic_store(&cg_dump_on, 1);
	dump_sig_take();
	wd_start();
	errno = saved;
}

void cg_dump_exit(void)
{
	struct model_live_cap one;
	if (!atomic_load(&cg_dump_on))
		return;
	atomic_store(&wd_stop, 1);
	if (model_capture_live_try(&one, 1) > 0)
		cg_dump_now("exit");
}

void cg_dump_after_fork_child(void)
{
	if (!atomic_load(&cg_dump_on))
		return;
	wd_sem_open(); /* the parent's, copied mid-use perhaps: a fresh one */
	atomic_store(&wd_running, 0);
	atomic_store(&dump_busy, 0);
	memset(stall_seq, 0, sizeof stall_seq);
	memset(stall_tid, 0, sizeof stall_tid);
}

CG_HOT void cg_dump_blocked(int hid, int kind, const uintptr_t a[4], uint32_t site)
{
	/* a fork child's first blocking call starts its watchdog */
	if (CG_UNLIKELY(!atomic_load_explicit(&wd_running, memory_order_relaxed)))
		wd_start();
	/* a thread whose first hooked call this is (an NCCL teardown) */
	(void)cg_slot_for_work();
	cg_block_enter(hid, kind, a, site, cg_now_ns());
}

void cg_dump_unblocked(void)
{
	cg_block_leave();
}
