/*
 * shim/log.h -- the log sink and the record builder.
 *
 * A record is built in a caller-owned stack buffer (no allocation, no stdio
 * stream, no lock) and written with one write(2) as a whole line, so lines
 * from several threads and processes never interleave. The same calls
 * produce JSONL or text, chosen by CGSHIM_LOG_FORMAT. A record that does not
 * fit is cut at a field boundary and marked "trunc":true.
 */
#ifndef CGSHIM_LOG_H
#define CGSHIM_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "cgshim/record.h"
#include "config.h"

#define CG_REC_MAX 4096

struct cg_rec {
	int on; /* 0: the level filtered it out, every rec_* call is a no-op */
	int level;
	int wlevel; /* the level as written (level may be lowered for batching) */
	int json;   /* built as JSON: the JSONL format, or a record for people */
	int human;  /* text format: a violation, built as JSON and written by log-text.c */
	int nfields;
	int trunc;
	size_t n;
	uint64_t ts; /* the record's time stamp, also its batch time */
	char buf[CG_REC_MAX];
};

/* Current level; a record at level L is written when L <= cg_log_level. */
extern int cg_log_level;

static inline int cg_log_on(int level)
{
	return level <= cg_log_level;
}

/* Take the identity of fd 1 and fd 2 as the program was started with them
 * (the constructor, before main): the sink is later bound to fd 2 (fd 1)
 * only if it still names that file. */
void cg_log_early(void);
/* Open the sink (CGSHIM_LOG_FILE or stderr). Returns 0, or -1 with no sink
 * (records dropped) and one plain-text warning on the original stderr. */
int cg_log_open(void);
/* fn writes the process's first record (the start record), just before
 * the first other record; never if nothing is recorded. */
void cg_log_set_preamble(void (*fn)(void));
void cg_log_after_fork_child(void);
/* The process's rank token (RANK, LOCAL_RANK, OMPI_COMM_WORLD_RANK or
 * SLURM_PROCID, validated; "badrank" when malformed), read once by
 * cg_log_open; NULL when none is set. Every record's header carries it
 * ("rank") when it is set. */
const char *cg_log_rank(void);

/* ev: one of record.h's CGSHIM_EV_* names (include/cgshim/records.def),
 * never a literal: tests/lists_check.py checks. */
void rec_begin(struct cg_rec *r, int level, const char *ev);
/* The level of a lifecycle event record (capture, alloc, launches): info,
 * or debug for one of a steady capture cycle (repeat: call.h,
 * CG_CALL_REPEAT), counted (records_condensed) when that hides it. */
int cg_log_life_level(int repeat);
/* Same, stamped ts (CLOCK_MONOTONIC ns) that the caller already read:
 * clock_gettime is ~70 ns in the lent VM, and a call record is stamped at
 * the moment its duration ends. */
void rec_begin_at(struct cg_rec *r, int level, const char *ev, uint64_t ts);
/* Fields. Numbers, booleans and words are formatted straight into the
 * record's buffer by one shared out-of-line writer each (below), records
 * being written on every lifecycle call: one room check per field, the
 * key's length known at compile time for literal keys (no strlen). */
void rec_str_n(struct cg_rec *r, const char *key, size_t klen, const char *val);
void rec_open_n(struct cg_rec *r, const char *key, size_t klen, char bracket);

/* Room for need more bytes, keeping room for the closing and the marker;
 * a record that does not fit is marked truncated and takes nothing more. */
static inline int rec_room_(struct cg_rec *r, size_t need)
{
	if (__builtin_expect(r->trunc, 0))
		return 0;
	if (__builtin_expect(r->n + need + 24 >= CG_REC_MAX, 0)) {
		r->trunc = 1;
		return 0;
	}
	return 1;
}

/* ,"key": (JSON) or " key=" (text); the caller checked room for it. */
static inline char *rec_key_(struct cg_rec *r, const char *k, size_t kl)
{
	char *o = r->buf + r->n;
	if (r->json) {
		if (r->nfields++)
			*o++ = ',';
		*o++ = '"';
		__builtin_memcpy(o, k, kl);
		o += kl;
		*o++ = '"';
		*o++ = ':';
	} else {
		*o++ = ' ';
		__builtin_memcpy(o, k, kl);
		o += kl;
		*o++ = '=';
	}
	return o;
}

static inline char *rec_fmt_u64_(char *o, unsigned long long v)
{
	char t[20];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*o++ = t[--n];
	return o;
}

static inline char *rec_fmt_i64_(char *o, long long v)
{
	if (v < 0) {
		*o++ = '-';
		return rec_fmt_u64_(o, 0ull - (unsigned long long)v);
	}
	return rec_fmt_u64_(o, (unsigned long long)v);
}

/* 0x... (in quotes for JSON: JSON has no hex numbers) */
static inline char *rec_fmt_hex_(char *o, unsigned long long v, int quoted)
{
	static const char dig[] = "0123456789abcdef";
	int nib = (64 - __builtin_clzll(v | 1) + 3) / 4;
	if (quoted)
		*o++ = '"';
	*o++ = '0';
	*o++ = 'x';
	for (int i = nib - 1; i >= 0; i--, v >>= 4)
		o[i] = dig[v & 15];
	o += nib;
	if (quoted)
		*o++ = '"';
	return o;
}

/* Out of line (log.c), shared by every record writer: one copy of each
 * formatter in the code a lifecycle loop runs (issue 36: in lockstep each
 * distinct code line is a cache miss; inlined at every field, the
 * formatters were a quarter of a capture cycle's shim code). */
void rec_u64_n(struct cg_rec *r, const char *key, size_t kl, unsigned long long val);
void rec_int_n(struct cg_rec *r, const char *key, size_t kl, long long val);
void rec_hex_n(struct cg_rec *r, const char *key, size_t kl, unsigned long long val);
void rec_bool_n(struct cg_rec *r, const char *key, size_t kl, int val);
void rec_word_n(struct cg_rec *r, const char *key, size_t kl, const char *val, size_t vl);

static inline void rec_u64(struct cg_rec *r, const char *key, unsigned long long val)
{
	if (r->on)
		rec_u64_n(r, key, __builtin_strlen(key), val);
}

static inline void rec_int(struct cg_rec *r, const char *key, long long val)
{
	if (r->on)
		rec_int_n(r, key, __builtin_strlen(key), val);
}

static inline void rec_hex(struct cg_rec *r, const char *key, unsigned long long val)
{
	if (r->on)
		rec_hex_n(r, key, __builtin_strlen(key), val);
}

static inline void rec_bool(struct cg_rec *r, const char *key, int val)
{
	if (r->on)
		rec_bool_n(r, key, __builtin_strlen(key), val);
}

static inline void rec_str(struct cg_rec *r, const char *key, const char *val)
{
	if (r->on)
		rec_str_n(r, key, __builtin_strlen(key), val);
}

/* A string known to need no escaping (an identifier: API and rule names,
 * enum words): copied without scanning. */
static inline void rec_word(struct cg_rec *r, const char *key, const char *val)
{
	if (r->on)
		rec_word_n(r, key, __builtin_strlen(key), val, __builtin_strlen(val));
}

/* A nested JSON array/object value written by the caller piecewise:
 * rec_open(r, "sites", '[') ... rec_elem_*() ... rec_close(r, ']'). */
static inline void rec_open(struct cg_rec *r, const char *key, char bracket)
{
	if (r->on)
		rec_open_n(r, key, __builtin_strlen(key), bracket);
}
void rec_close(struct cg_rec *r, char bracket);
void rec_elem_str(struct cg_rec *r, const char *val);
void rec_elem_hex(struct cg_rec *r, unsigned long long val);
/* An element written verbatim (a number). */
void rec_elem_raw(struct cg_rec *r, const char *val);
/* Elements already formatted and separated among themselves ("a","b"). */
void rec_raw_elems(struct cg_rec *r, const char *raw, size_t len);
void rec_end(struct cg_rec *r);
/* Send a warn/error record through the thread's batch instead of its own
 * write (the record's level as written is unchanged). */
static inline void rec_batched(struct cg_rec *r)
{
	if (r->on && r->level < CG_L_INFO)
		r->level = CG_L_INFO;
}

/* Records at info level and below are gathered per thread and written in
 * batches (whole lines, one write(2) per batch): at 8 KiB, 50 ms after the
 * oldest, before an error/warn record of the same thread (those are written
 * at once, so a violation is on disk before the driver call), at thread
 * exit, before fork and at process exit. */
void cg_log_flush_thread(void);
/* From now on every record is written at once (process exit). */
void cg_log_unbuffered(void);
/* From a fatal-signal handler (crashlog.c): every thread's batch out, then
 * every record written at once. No allocation and no lock waited on: the
 * list of batches is taken with a trylock (retried for ~50 ms; when the
 * interrupted code holds it, only this thread's batch is written, and -1
 * returned), a batch another thread is appending to at that moment is
 * waited for a bounded time and else left. Returns the number of batches
 * left unwritten. The interrupted thread's own batch is written even when
 * the signal came in the middle of its append: at worst a line it was
 * flushing is written twice. */
int cg_log_fatal_flush(void);
/* The program's own handler took the signal and returned (a runtime that
 * recovers from SIGSEGV): batching resumes unless the exit had stopped it
 * (a race with an exit running at that moment can resume it after the exit
 * flush: its later records are then lost). */
void cg_log_fatal_resume(void);

/* Printf-style warning record (ev "warning"), for the shim's own trouble:
 * the message goes to the writer the hook wing set at start-up
 * (cg_warn_writer_set, hooks/wire.c: emit_warning); none before it. */
void cg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cg_warn_writer_set(void (*w)(const char *msg));

/* A violation or another warn/error record built as JSON (js, n bytes,
 * the object without its newline) for people: prefix ("cgshim TIME
 * PID:TID LEVEL"), then the record's kind, its rule and the call as the
 * program wrote it on one line, and indented lines (log-text.c). Returns
 * the length written to out (at most cap, ends in a newline; a block that
 * does not fit is cut at a line and marked). */
size_t cg_log_text_block(const char *js, size_t n, const char *prefix, char *out, size_t cap);

/* Name of a CUresult ("CUDA_ERROR_INVALID_VALUE"), without calling the driver. */
const char *cg_result_name(int rc);

uint64_t cg_now_ns(void);

#endif
