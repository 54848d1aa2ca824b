/*
 * shim/crashlog.c -- a crash in the host leaves a complete log (issue 30).
 *
 * Info and finer records wait in per-thread batches (log.c), written at
 * exit; a process killed by a signal runs no exit handler, so its batches
 * would die with it. cg_crash_install (init_once) takes SIGSEGV, SIGBUS,
 * SIGABRT, SIGFPE and SIGILL, keeping the action the program had. When one
 * comes:
 *   1. every thread's batch is written (cg_log_fatal_flush);
 *   2. one `fatal` record (error): the signal, its si_code, the fault
 *      address, the thread, each thread's last hooked call (doors.h's
 *      slots), the live captures (model_capture_live_try);
 *   3. the signal goes on: to the program's handler, called as the kernel
 *      would have called it (its sa_mask and the signal blocked unless
 *      SA_NODEFER, SA_SIGINFO's three arguments, SA_RESETHAND one-shot), or
 *      to the default action: the default restored and the signal raised
 *      again, delivered when this handler returns, so the process dies of
 *      it as it does bare (status, core; the core's registers are the
 *      faulting ones, restored by sigreturn before the delivery).
 *
 * Async-signal safety: no allocation, no lock waited on (trylocks retried
 * for ~50 ms, then that part is left out and the record says so), output
 * by write(2). Beyond POSIX's list it uses what glibc makes safe in
 * practice: pthread_mutex_trylock/unlock of a normal mutex (one atomic
 * each) and snprintf of integers and strings (the text header, the list
 * elements; no allocation for these conversions). The races, written down:
 * a batch another thread is appending to is waited for a bounded time and
 * else left (counted, "batches_left"); the interrupted thread's own batch
 * is written even mid-append (a line being flushed may appear twice); the
 * last-call slots are read without a lock (a thread starting or ending at
 * that moment may be missed or named with its previous call).
 *
 * Every signal writes out the batches. The `fatal` record is written at
 * most twice per process: once when the program's handler comes next, once
 * when the default action does (a runtime that recovers from SIGSEGV, as a
 * JVM or Go does on purpose, gets one record, not one per signal, and its
 * real crash later still gets its own). A second thread faulting while the
 * first writes waits for it (at most ~1 s).
 *
 * Not installed with CGSHIM_LOG=off, nor for a signal the program ignores
 * (SIG_IGN: the kernel then kills on a fault and a raise() does nothing,
 * as bare). A handler the program installs after the shim's replaces it and
 * is not replaced again: the program's own sigaction keeps its meaning (it
 * reads back what it set, and its handler runs); handlers that chain to the
 * previous action (Python's faulthandler, breakpad, absl) reach this one.
 * When the program's handler returns, batching resumes (cg_log_fatal_resume).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cgshim/record.h"
#include "crashlog.h"
#include "doors.h"
#include "emit.h"
#include "log.h"
#include "model.h"
#include "resolve.h"

static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
#define CRASH_NSIG (int)(sizeof crash_sigs / sizeof crash_sigs[0])
#define CRASH_CAPS 16
#define CRASH_STACK_NEED (12u << 10)

/* The program's action for each signal, taken when ours was installed;
 * prev_once: SA_RESETHAND's one use is spent (then the default applies). */
static struct sigaction crash_prev[CRASH_NSIG];
static _Atomic int crash_prev_spent[CRASH_NSIG];
/* 1 while a thread writes (one at a time: the record and the captures
 * below are static) */
static _Atomic int crash_busy;
/* A record was written whose next step was [0] the program's handler,
 * [1] the default action: one of each per process. */
static _Atomic int crash_said[2];

static int crash_index(int sig)
{
	for (int i = 0; i < CRASH_NSIG; i++)
		if (crash_sigs[i] == sig)
			return i;
	return -1;
}

static const char *crash_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGABRT:
		return "SIGABRT";
	case SIGFPE:
		return "SIGFPE";
	case SIGILL:
		return "SIGILL";
	default:
		return "other";
	}
}

int cg_signal_has_handler(const struct sigaction *p, _Atomic int *spent)
{
	if (spent && atomic_load_explicit(spent, memory_order_relaxed))
		return 0;
	if (p->sa_flags & SA_SIGINFO)
		return p->sa_sigaction != NULL;
	return p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN;
}

/* The program's action is a handler to call (not SIG_DFL, not spent). */
static int crash_has_handler(int i)
{
	return cg_signal_has_handler(&crash_prev[i], &crash_prev_spent[i]);
}

int cg_signal_chain(int sig, const struct sigaction *p, _Atomic int *spent, siginfo_t *si, void *uc)
{
	sigset_t mask, old;
	if (!cg_signal_has_handler(p, spent))
		return 0;
	mask = p->sa_mask;
	if (!(p->sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	if (p->sa_flags & SA_NODEFER) {
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	}
	if ((p->sa_flags & SA_RESETHAND) && spent)
		atomic_store(spent, 1);
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 1;
}

/* The "last_calls" list: "tid:api" per thread, its last hooked call. */
static void crash_last_calls(struct cg_rec *r, const char *key, const void *arg)
{
	char el[160];
	(void)arg;
	rec_open(r, key, '[');
	for (int k = 0; k < CG_CALL_SLOTS; k++) {
		int tid = atomic_load_explicit(&cg_call_slots[k].tid, memory_order_acquire);
		int hid = atomic_load_explicit(&cg_call_slots[k].hid, memory_order_relaxed);
		if (tid && hid >= 0 && hid < HID_COUNT) {
			snprintf(el, sizeof el, "%d:%s", tid, cg_routes[hid].name);
			rec_elem_str(r, el);
		}
	}
	rec_close(r, ']');
}

struct crash_caps {
	const struct model_live_cap *v;
	int n;
};

/* The "captures" list: one string per live capture. */
static void crash_captures(struct cg_rec *r, const char *key, const void *arg)
{
	static const char *const modes[] = {"global", "thread_local", "relaxed"};
	const struct crash_caps *c = arg;
	char el[160];
	rec_open(r, key, '[');
	for (int k = 0; k < c->n && k < CRASH_CAPS; k++) {
		snprintf(el, sizeof el, "%llu stream=%p graph=%p begin_tid=%d mode=%s%s",
			 (unsigned long long)c->v[k].id, (void *)c->v[k].stream, (void *)c->v[k].graph, c->v[k].tid,
			 c->v[k].mode >= 0 && c->v[k].mode <= 2 ? modes[c->v[k].mode] : "?",
			 c->v[k].invalid ? " invalidated" : "");
		rec_elem_str(r, el);
	}
	rec_close(r, ']');
}

/* The "fatal" record. crashlog is a door of its own (a signal): it hands
 * its facts to the writer (emit_fatal_open) itself, into a static record,
 * not one on the (perhaps alternate, small) stack. */
static void crash_record(int sig, int i, const siginfo_t *si, int left)
{
	/* static: one thread at a time gets here (crash_busy) */
	static struct model_live_cap caps[CRASH_CAPS];
	static struct cg_rec r;
	int ncap = model_capture_live_try(caps, CRASH_CAPS);
	struct crash_caps live = {caps, ncap};
	struct ev_fatal f = {.signal = crash_name(sig),
			     .signo = sig,
			     .code = si ? si->si_code : 0,
			     /* sent by the kernel: a fault, with its address */
			     .addr = si ? (unsigned long long)(uintptr_t)si->si_addr : 0,
			     .has_addr = si && si->si_code > 0,
			     /* raise(), kill(), abort() */
			     .sender_pid = si ? si->si_pid : 0,
			     .has_sender_pid = si && si->si_code <= 0,
			     .fault_tid = cg_gettid(),
			     .last_calls = {crash_last_calls, NULL},
			     .captures_unread = 1, /* the capture lock stayed held */
			     .has_captures_unread = ncap < 0,
			     .live_captures = ncap,
			     .has_live_captures = ncap >= 0,
			     .captures = {ncap >= 0 ? crash_captures : NULL, &live},
			     .batches_left = left, /* -1: the list of batches stayed locked */
			     .has_batches_left = left != 0,
			     .then = crash_has_handler(i) ? "program_handler" : "default_action"};
	if (emit_fatal_open(&r, CG_L_ERROR, &f))
		rec_end(&r);
}

/* Hand the signal on as the kernel would have without the shim. Returns 1
 * when the program's handler was called and returned. */
static int crash_pass_on(int sig, int i, siginfo_t *si, void *uc)
{
	if (cg_signal_chain(sig, &crash_prev[i], &crash_prev_spent[i], si, uc))
		return 1; /* a fault the handler did not mend faults again, as bare */
	/* The default action: restore it and raise the signal again. It is
	 * blocked while this handler runs, so it is delivered on return, after
	 * sigreturn has restored the interrupted context. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
	return 0;
}

/* Room left on the alternate signal stack, when the handler runs on one
 * (SA_ONSTACK: a stack overflow is delivered there). Writing the record
 * takes a few KiB of stack (the record and the captures are static; the
 * text header's snprintf is the most of it); on less than CRASH_STACK_NEED
 * the shim writes nothing and hands the signal on at once. The program's
 * handler is called after the record's frames are gone, with the stack it
 * sized for itself. SIZE_MAX when not on an alternate stack. */
static size_t crash_stack_room(void)
{
	stack_t ss;
	char here;
	if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
		return SIZE_MAX;
	return (size_t)(&here - (char *)ss.ss_sp);
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno, i = crash_index(sig), idle, got = 0;
	if (i < 0)
		return;
	if (crash_stack_room() < CRASH_STACK_NEED) {
		crash_pass_on(sig, i, si, uc);
		errno = saved;
		return;
	}
	/* Another thread writing: let it finish (bounded), then write what
	 * this one has. */
	for (int k = 0; !got && k < 1000; k++) {
		struct timespec pause = {0, 1000000};
		idle = 0;
		got = atomic_compare_exchange_strong(&crash_busy, &idle, 1);
		if (!got)
			nanosleep(&pause, NULL);
	}
	if (got) {
		int dflt = !crash_has_handler(i), left = cg_log_fatal_flush();
		if (!atomic_exchange(&crash_said[dflt], 1))
			crash_record(sig, i, si, left);
		atomic_store(&crash_busy, 0);
	}
	/* The program's handler returned: the signal was handled (a runtime
	 * that uses SIGSEGV on purpose) or its fault comes again (then this
	 * handler flushes again). Batching resumes. */
	if (crash_pass_on(sig, i, si, uc))
		cg_log_fatal_resume();
	errno = saved;
}

void cg_crash_install(void)
{
	if (!cg_log_on(CG_L_ERROR))
		return;
	for (int i = 0; i < CRASH_NSIG; i++) {
		struct sigaction ours;
		if (sigaction(crash_sigs[i], NULL, &crash_prev[i]) != 0)
			continue;
		if (!(crash_prev[i].sa_flags & SA_SIGINFO) && crash_prev[i].sa_handler == SIG_IGN)
			continue;
		memset(&ours, 0, sizeof ours);
		ours.sa_sigaction = crash_handler;
		ours.sa_flags = SA_SIGINFO | SA_ONSTACK; /* a stack overflow needs the program's alternate stack */
		sigemptyset(&ours.sa_mask);
		/* Read and replace in one step is not possible: a handler the
		 * program installs in between is kept in crash_prev by the
		 * second read (the window is the two calls below). */
		if (sigaction(crash_sigs[i], &ours, &crash_prev[i]) == 0 && !(crash_prev[i].sa_flags & SA_SIGINFO) &&
		    crash_prev[i].sa_handler == SIG_IGN)
			sigaction(crash_sigs[i], &crash_prev[i], NULL); /* ignored in between: left so */
	}
}
