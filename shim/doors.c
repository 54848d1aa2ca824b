/* shim/doors.c -- per-door counts of lookups and calls (doors.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "doors.h"
#include "locks.h"
#include "resolve.h"

_Atomic unsigned char cg_door_of[HID_COUNT];

static const char *const door_names[CG_DOOR_COUNT] = {"export", "dlsym", "cuGetProcAddress", "runtime"};

/* Threads that counted; a thread's counts move to `gone` when it exits. */
struct door_thread {
	_Atomic unsigned long *calls;
	struct cg_call_slot *slot; /* NULL: the table was full */
	struct door_thread *next, *prev;
};
static struct door_thread *threads;
static unsigned long gone[CG_DOOR_COUNT];
static _Atomic unsigned long lookups[CG_DOOR_COUNT];
static _Atomic unsigned long early_calls;
static _Atomic int early_warned;
static pthread_key_t door_key;
static pthread_once_t door_key_once = PTHREAD_ONCE_INIT;
static CG_TLS struct door_thread self;
struct cg_call_slot cg_call_slots[CG_CALL_SLOTS];
_Atomic int cg_call_slots_hi;
static struct cg_call_slot slot_none; /* written by threads that found no slot, read by nobody */

static struct cg_call_slot *slot_take(void)
{
	int tid = cg_gettid();
	for (int i = 0; i < CG_CALL_SLOTS; i++) {
		int none = 0;
		if (atomic_load_explicit(&cg_call_slots[i].tid, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&cg_call_slots[i].tid, &none, tid)) {
			atomic_store_explicit(&cg_call_slots[i].hid, -1, memory_order_relaxed);
			atomic_store_explicit(&cg_call_slots[i].bhid, -1, memory_order_relaxed);
			atomic_store_explicit(&cg_call_slots[i].kn, 0, memory_order_relaxed);
			atomic_store_explicit(&cg_call_slots[i].gn, 0, memory_order_relaxed);
			for (int hi = atomic_load(&cg_call_slots_hi); hi < i + 1;)
				if (atomic_compare_exchange_weak(&cg_call_slots_hi, &hi, i + 1))
					break;
			return &cg_call_slots[i];
		}
	}
	return NULL;
}

static void door_thread_exit(void *arg)
{
	struct door_thread *t = arg;
	if (t->slot) {
		atomic_store_explicit(&t->slot->hid, -1, memory_order_relaxed);
		atomic_store_explicit(&t->slot->bhid, -1, memory_order_relaxed);
		atomic_store_explicit(&t->slot->tid, 0, memory_order_release);
		t->slot = NULL;
	}
	cg_tls.last_call = &slot_none.hid;
	cg_tls.slot = NULL;
	pthread_mutex_lock(&door_lock);
	for (int d = 0; d < CG_DOOR_COUNT; d++)
		gone[d] += atomic_load_explicit(&t->calls[d], memory_order_relaxed);
	if (t->prev)
		t->prev->next = t->next;
	else if (threads == t)
		threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
	pthread_mutex_unlock(&door_lock);
}

static void door_make_key(void)
{
	if (pthread_key_create(&door_key, door_thread_exit) != 0)
		door_key = (pthread_key_t)-1;
}

void cg_door_register_thread(void)
{
	cg_tls.door_reg = 1;
	pthread_once(&door_key_once, door_make_key);
	self.calls = cg_tls.door_calls;
	self.slot = slot_take();
	cg_tls.last_call = self.slot ? &self.slot->hid : &slot_none.hid;
	cg_tls.slot = self.slot;
	pthread_mutex_lock(&door_lock);
	self.prev = NULL;
	self.next = threads;
	if (threads)
		threads->prev = &self;
	threads = &self;
	pthread_mutex_unlock(&door_lock);
	if (door_key != (pthread_key_t)-1)
		(void)pthread_setspecific(door_key, &self);
}

void cg_door_routed(int hid, int door)
{
	unsigned char none = CG_DOOR_EXPORT;
	atomic_fetch_add_explicit(&lookups[door], 1, memory_order_relaxed);
	atomic_compare_exchange_strong(&cg_door_of[hid], &none, (unsigned char)door);
}

void cg_door_unroutable(const char *name, int version, unsigned long long flags)
{
	/* One warning per hooked name: a small fixed table of names seen. */
	static const char *seen[64];
	static _Atomic int nseen;
	int n, dup = 0;
	pthread_mutex_lock(&door_unroutable_lock);
	n = atomic_load(&nseen);
	for (int i = 0; i < n; i++)
		if (!strcmp(seen[i], name))
			dup = 1;
	if (!dup && n < 64) {
		seen[n] = name; /* the caller's string: compared only while it lives in this table */
		atomic_store(&nseen, n + 1);
	}
	pthread_mutex_unlock(&door_unroutable_lock);
	if (dup)
		return;
	cg_warn("cuGetProcAddress(\"%s\", %d, flags %llu) returned an entry point the shim does not hook "
		"at that version: calls through it are not seen (docs/design.md, 'Every version')",
		name, version, flags);
}

void cg_door_early(void)
{
	atomic_fetch_add_explicit(&early_calls, 1, memory_order_relaxed);
}

static void warn_early(void)
{
	unsigned long n = atomic_load(&early_calls);
	if (n && !atomic_exchange(&early_warned, 1))
		cg_warn("%lu CUDA call(s) reached the shim while it was being set up and were passed through "
			"unrecorded",
			n);
}

int cg_door_any_call(void)
{
	int any = 0;
	pthread_mutex_lock(&door_lock);
	for (int d = 0; d < CG_DOOR_COUNT; d++)
		any |= gone[d] != 0;
	for (struct door_thread *t = threads; t && !any; t = t->next)
		for (int d = 0; d < CG_DOOR_COUNT; d++)
			any |= atomic_load_explicit(&t->calls[d], memory_order_relaxed) != 0;
	pthread_mutex_unlock(&door_lock);
	return any;
}

void cg_door_counts(struct cg_door_counts *o)
{
	unsigned long sum[CG_DOOR_COUNT];
	warn_early();
	pthread_mutex_lock(&door_lock);
	for (int d = 0; d < CG_DOOR_COUNT; d++)
		sum[d] = gone[d];
	for (struct door_thread *t = threads; t; t = t->next)
		for (int d = 0; d < CG_DOOR_COUNT; d++)
			sum[d] += atomic_load_explicit(&t->calls[d], memory_order_relaxed);
	pthread_mutex_unlock(&door_lock);
	for (int d = 0; d < CG_DOOR_COUNT; d++) {
		o->names[d] = door_names[d];
		o->calls[d] = sum[d];
	}
	for (int d = CG_DOOR_DLSYM; d <= CG_DOOR_GETPROC; d++) {
		o->lookup_names[d - CG_DOOR_DLSYM] = door_names[d];
		o->lookups[d - CG_DOOR_DLSYM] = atomic_load(&lookups[d]);
	}
	o->early = atomic_load(&early_calls);
}

void cg_work_stream_gone(const void *s)
{
	int hi = atomic_load_explicit(&cg_call_slots_hi, memory_order_acquire);
	for (int i = 0; i < hi && i < CG_CALL_SLOTS; i++)
		for (int j = 0; j < CG_WORK_RING; j++) {
			struct cg_work *w[2] = {&cg_call_slots[i].kern[j], &cg_call_slots[i].graph[j]};
			for (int k = 0; k < 2; k++)
				if (atomic_load_explicit(&w[k]->stream, memory_order_relaxed) == (uintptr_t)s)
					atomic_store_explicit(&w[k]->obj, 0, memory_order_relaxed);
		}
}

/* The parent's other threads do not exist in the child: the child counts
 * its own calls from zero. */
void cg_door_after_fork_child(void)
{
	threads = NULL;
	/* the parent's threads' slots are free again; this thread takes one
	 * afresh at its next call (door_reg 0 below) */
	for (int i = 0; i < CG_CALL_SLOTS; i++)
		atomic_store_explicit(&cg_call_slots[i].tid, 0, memory_order_relaxed);
	self.slot = NULL;
	cg_tls.slot = NULL;
	memset(gone, 0, sizeof gone);
	for (int d = 0; d < CG_DOOR_COUNT; d++) {
		atomic_store(&lookups[d], 0);
		atomic_store(&cg_tls.door_calls[d], 0);
	}
	cg_tls.door_reg = 0;
}
