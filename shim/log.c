/* shim/log.c -- leveled log sink: whole lines, one write(2), no stdio locks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgshim/record.h"
#include "counters.h"
#include "hot.h"
#include "labels.h"
#include "locks.h"
#include "log.h"
#include "sink.h"
#include "state.h"

/* In hot.h's CG_HOT_DATA, after config.c's cg_churn_threshold (the
 * section's first, which starts it on a line). */
int cg_log_level CG_HOT_DATA = CG_L_WARN;
static void tb_after_fork(void);
static _Atomic unsigned long long log_seq;
/* The preamble (start record) is written just before the process's first
 * other record, not at set-up. */
static void (*preamble_fn)(void);
static _Atomic int preamble_pending;

void cg_log_set_preamble(void (*fn)(void))
{
	preamble_fn = fn;
	atomic_store(&preamble_pending, fn != NULL);
}

CG_HOT uint64_t cg_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- per-thread batching ------------------------------------------------ */
#define TBUF_SIZE 8192
#define TBUF_MAX_AGE_NS 50000000ull

struct tbuf {
	atomic_flag busy; /* owner appends/flushes; the exit flusher borrows it */
	int registered;
	size_t n;
	uint64_t t_first;
	struct tbuf *next, *prev;
	char buf[TBUF_SIZE];
};

static CG_TLS struct tbuf tb;
static struct tbuf *tb_head;
static pthread_key_t tb_key;
static pthread_once_t tb_key_once = PTHREAD_ONCE_INIT;
static _Atomic int tb_off;

static void tb_flush_locked(struct tbuf *b)
{
	if (b->n) {
		cg_sink_write(b->buf, b->n);
		b->n = 0;
	}
}

static void tb_thread_exit(void *arg)
{
	struct tbuf *b = arg;
	while (atomic_flag_test_and_set_explicit(&b->busy, memory_order_acquire))
		;
	tb_flush_locked(b);
	atomic_flag_clear_explicit(&b->busy, memory_order_release);
	pthread_mutex_lock(&tb_lock);
	if (b->registered) {
		if (b->prev)
			b->prev->next = b->next;
		else
			tb_head = b->next;
		if (b->next)
			b->next->prev = b->prev;
		b->registered = 0;
	}
	pthread_mutex_unlock(&tb_lock);
}

static void tb_make_key(void)
{
	(void)pthread_key_create(&tb_key, tb_thread_exit);
}

static void tb_register(struct tbuf *b)
{
	pthread_once(&tb_key_once, tb_make_key);
	pthread_mutex_lock(&tb_lock);
	b->prev = NULL;
	b->next = tb_head;
	if (tb_head)
		tb_head->prev = b;
	tb_head = b;
	b->registered = 1;
	pthread_mutex_unlock(&tb_lock);
	(void)pthread_setspecific(tb_key, b);
}

/* Write line: batched (level info and below) or at once, keeping this
 * thread's order either way. */
static void emit_line(const char *line, size_t len, int level, uint64_t now)
{
	struct tbuf *b = &tb;
	if (level <= CG_L_WARN || atomic_load_explicit(&tb_off, memory_order_relaxed) || len > TBUF_SIZE) {
		if (b->n) {
			while (atomic_flag_test_and_set_explicit(&b->busy, memory_order_acquire))
				;
			tb_flush_locked(b);
			atomic_flag_clear_explicit(&b->busy, memory_order_release);
		}
		cg_sink_write(line, len);
		return;
	}
	if (!b->registered)
		tb_register(b);
	while (atomic_flag_test_and_set_explicit(&b->busy, memory_order_acquire))
		;
	if (b->n + len > TBUF_SIZE)
		tb_flush_locked(b);
	if (!b->n)
		b->t_first = now;
	memcpy(b->buf + b->n, line, len);
	b->n += len;
	if (now - b->t_first > TBUF_MAX_AGE_NS)
		tb_flush_locked(b);
	atomic_flag_clear_explicit(&b->busy, memory_order_release);
}

void cg_log_flush_thread(void)
{
	struct tbuf *b = &tb;
	if (!b->n)
		return;
	while (atomic_flag_test_and_set_explicit(&b->busy, memory_order_acquire))
		;
	tb_flush_locked(b);
	atomic_flag_clear_explicit(&b->busy, memory_order_release);
}

static void cg_log_flush_all(void)
{
	pthread_mutex_lock(&tb_lock);
	for (struct tbuf *b = tb_head; b; b = b->next) {
		/* Bounded wait: a thread stuck inside an append cannot hold
		 * the process at exit. */
		int spins = 0;
		while (atomic_flag_test_and_set_explicit(&b->busy, memory_order_acquire))
			if (++spins > 1000000)
				break;
		if (spins <= 1000000) {
			tb_flush_locked(b);
			atomic_flag_clear_explicit(&b->busy, memory_order_release);
		}
	}
	pthread_mutex_unlock(&tb_lock);
}

/* The parent's other threads do not exist in the child: forget their
 * buffers (what they held is the parent's to write). This thread's buffer
 * was flushed before the fork. */
static void tb_after_fork(void)
{
	tb_head = NULL;
	tb.registered = 0;
	tb.n = 0;
}

/* One thread's batch out from a signal handler (cg_log_fatal_flush): own is
 * the interrupted thread's buffer, whose busy flag (if set) is its own and
 * never clears while the handler runs; another thread's is waited for a
 * bounded time, else left. Returns 1 if written. */
static int tb_fatal_flush(struct tbuf *b, int own)
{
	int spins = 0, took = 1;
	while (atomic_flag_test_and_set_explicit(&b->busy, memory_order_acquire)) {
		if (own || ++spins > 1000000) {
			took = 0;
			break;
		}
	}
	if (!took && !own)
		return 0;
	tb_flush_locked(b);
	if (took)
		atomic_flag_clear_explicit(&b->busy, memory_order_release);
	return 1;
}

/* tb_off was set by cg_log_fatal_flush (not by the exit): resume undoes it */
static _Atomic int tb_off_fatal;

void cg_log_fatal_resume(void)
{
	if (atomic_exchange(&tb_off_fatal, 0))
		atomic_store(&tb_off, 0);
	cg_sink_fatal(0);
}

int cg_log_fatal_flush(void)
{
	int left = 0, tries = 0;
	if (!atomic_exchange(&tb_off, 1))
		atomic_store(&tb_off_fatal, 1);
	cg_sink_fatal(1);
	while (pthread_mutex_trylock(&tb_lock) != 0) {
		struct timespec pause = {0, 1000000};
		if (++tries > 50) { /* the list may be mid-change: this thread's batch only */
			tb_fatal_flush(&tb, 1);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	for (struct tbuf *b = tb_head; b; b = b->next)
		left += !tb_fatal_flush(b, b == &tb);
	pthread_mutex_unlock(&tb_lock);
	return left;
}

void cg_log_after_fork_child(void)
{
	tb_after_fork();
	cg_sink_after_fork_child();
}

void cg_log_unbuffered(void)
{
	atomic_store(&tb_off, 1);
	cg_log_flush_all();
}

/* ---- record builder -------------------------------------------------------- */

/* Numbers are formatted without stdio by the rec_fmt_* helpers of log.h
 * (records are built on every lifecycle call; snprintf was a measurable
 * share of it). */

static inline void put(struct cg_rec *r, const char *s, size_t l)
{
	if (!rec_room_(r, l))
		return;
	memcpy(r->buf + r->n, s, l);
	r->n += l;
}

static void puts_(struct cg_rec *r, const char *s)
{
	put(r, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (2..4), or 0 when the
 * bytes there are not one (stray continuation, overlong form, surrogate,
 * above U+10FFFF, cut short by the NUL). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* JSON string body escaping; in text mode, control bytes (a newline in an
 * environment value or a path would forge a line) as \xNN, and quotes.
 * Runs of plain ASCII are copied at once; well-formed UTF-8 is copied as
 * is. A byte that is not UTF-8 (a path or an executable name may hold any
 * byte) becomes \u00XX in JSON, so every line stays valid JSON and the
 * byte's value can still be read back, and \xXX in text. */
static void put_escaped(struct cg_rec *r, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	if (!s)
		return;
	for (;;) {
		const char *run = s;
		while ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x80 && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			put(r, run, (size_t)(s - run));
		if (!*s)
			return;
		unsigned char c = (unsigned char)*s++;
		if (c >= 0x80) {
			size_t n = utf8_len((const unsigned char *)s - 1);
			if (n) {
				put(r, s - 1, n);
				s += n - 1;
			} else if (r->json) {
				char tmp[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				put(r, tmp, 6);
			} else {
				char tmp[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
				put(r, tmp, 4);
			}
		} else if (c == '"' || c == '\\') {
			char tmp[2] = {'\\', (char)c};
			put(r, tmp, 2);
		} else if (r->json) {
			char tmp[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(r, tmp, 6);
		} else {
			char tmp[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
			put(r, tmp, 4);
		}
	}
}

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" (UTC) for the text header, from the
 * record's CLOCK_MONOTONIC stamp moved onto the wall clock. Civil date by
 * arithmetic (Howard Hinnant's days-to-civil), not gmtime_r: glibc's takes
 * the time-zone lock, which a record written in a forked child or a signal
 * handler must not wait on. */
static int text_stamp(char *out, size_t cap, uint64_t mono_ns)
{
	struct timespec now;
	long long wall, days, secs, z, era, doe, yoe, doy, mp, y, m, d;
	clock_gettime(CLOCK_REALTIME, &now);
	wall = (long long)now.tv_sec * 1000000000ll + now.tv_nsec - (long long)(cg_now_ns() - mono_ns);
	days = wall / 86400000000000ll;
	secs = wall / 1000000000ll - days * 86400;
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	return snprintf(out, cap, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%06lldZ", y, m, d, secs / 3600,
			secs / 60 % 60, secs % 60, wall % 1000000000ll / 1000);
}

/* "cgshim TIME PID:TID LEVEL EV[ rank=R]" (ev NULL: up to the level). */
static int text_prefix(char *out, size_t cap, int level, uint64_t ts, const char *ev)
{
	static const char *const lv[] = CG_L_NAMES; /* "auto" and "off" never begin a record */
	char when[72];
	text_stamp(when, sizeof when, ts);
	return snprintf(out, cap, "cgshim %s %d:%d %s%s%s%s%s", when, cg_sink_pid, cg_gettid(),
			level >= CG_L_ERROR && level <= CG_L_TRACE ? lv[level] : "", ev ? " " : "", ev ? ev : "",
			cg_log_rank() ? " rank=" : "", cg_log_rank() ? cg_log_rank() : "");
}

static void key(struct cg_rec *r, const char *k, size_t kl)
{
	if (rec_room_(r, kl + 4))
		r->n = (size_t)(rec_key_(r, k, kl) - r->buf);
}

CG_HOT int cg_log_life_level(int repeat)
{
	if (!repeat)
		return CG_L_INFO;
	if (!cg_log_on(CG_L_DEBUG) && cg_log_on(CG_L_INFO))
		cg_count_condensed();
	return CG_L_DEBUG;
}

void rec_begin(struct cg_rec *r, int level, const char *ev)
{
	rec_begin_at(r, level, ev, 0);
}

CG_HOT void rec_begin_at(struct cg_rec *r, int level, const char *ev, uint64_t ts)
{
	char tmp[256]; /* the JSON header: at most ~220 bytes with a 64-character rank */
	int l;
	r->on = cg_log_on(level);
	if (!r->on)
		return;
	if (CG_UNLIKELY(atomic_load_explicit(&preamble_pending, memory_order_relaxed)) &&
	    atomic_exchange(&preamble_pending, 0))
		preamble_fn();
	r->level = level;
	r->wlevel = level;
	r->json = cg_cfg.log_format == CG_FMT_JSONL;
	/* a violation or another warning (a warn or error record: the shim's
	 * own trouble, a mismatch, a fatal signal) in the text format is for
	 * people: built as JSON, written as a block of lines at the end
	 * (log-text.c). The fatal record's block is rendered in a static
	 * buffer, not on a signal handler's (perhaps alternate, small) stack. */
	r->human = 0;
	if (!r->json && (level <= CG_L_WARN || !strcmp(ev, CGSHIM_EV_VIOLATION)))
		r->human = strcmp(ev, CGSHIM_EV_FATAL) ? 1 : 2;
	if (r->human)
		r->json = 1;
	r->nfields = 0;
	r->trunc = 0;
	r->n = 0;
	if (!ts)
		ts = cg_now_ns();
	r->ts = ts;
	unsigned long long seq = atomic_fetch_add_explicit(&log_seq, 1, memory_order_relaxed) + 1;
	if (r->json) {
		/* {"v":1,"ev":"...","seq":N,"ts":N,"pid":N,"tid":N */
		static const char a[] = "{\"v\":", b[] = ",\"ev\":\"",
				  c[] = "\",\"seq\":", d[] = ",\"ts\":", e[] = ",\"pid\":", f[] = ",\"tid\":";
		size_t k = 0, evl = strlen(ev);
		if (evl > 40)
			evl = 40;
#define CAT(str) (memcpy(tmp + k, str, sizeof str - 1), k += sizeof str - 1)
		CAT(a);
		k = (size_t)(rec_fmt_u64_(tmp + k, CGSHIM_RECORD_VERSION) - tmp);
		CAT(b);
		memcpy(tmp + k, ev, evl);
		k += evl;
		CAT(c);
		k = (size_t)(rec_fmt_u64_(tmp + k, seq) - tmp);
		CAT(d);
		k = (size_t)(rec_fmt_u64_(tmp + k, ts) - tmp);
		{
			/* ,"pid":N,"tid":N[,"rank":"R"] is the same for every record
			 * of a thread: built once per thread (and process), so the
			 * rank costs a copy of a few bytes per record, nothing on a
			 * path that writes no record (launches). */
			static CG_TLS char who[128];
			static CG_TLS size_t who_len;
			static CG_TLS int who_pid;
			static CG_TLS const char *who_rank;
			if (who_pid != cg_sink_pid || !who_len || who_rank != cg_log_rank()) {
				size_t w = 0;
#define WCAT(str) (memcpy(who + w, str, sizeof str - 1), w += sizeof str - 1)
				WCAT(e);
				w = (size_t)(rec_fmt_i64_(who + w, cg_sink_pid) - who);
				WCAT(f);
				w = (size_t)(rec_fmt_i64_(who + w, cg_gettid()) - who);
				if (cg_log_rank()) { /* a token: [A-Za-z0-9_.-]{1,64}, no escaping */
					size_t rl = strlen(cg_log_rank());
					WCAT(",\"rank\":\"");
					memcpy(who + w, cg_log_rank(), rl);
					w += rl;
					who[w++] = '"';
				}
#undef WCAT
				who_len = w;
				who_pid = cg_sink_pid;
				who_rank = cg_log_rank();
			}
			memcpy(tmp + k, who, who_len);
			k += who_len;
		}
#undef CAT
		l = (int)k;
		r->nfields = 1;
	} else {
		l = text_prefix(tmp, sizeof tmp, level, ts, ev);
	}
	if (l > 0)
		put(r, tmp, (size_t)l < sizeof tmp ? (size_t)l : sizeof tmp - 1);
}

/* The number, boolean and word fields (log.h): the caller checked r->on. */
CG_HOT void rec_u64_n(struct cg_rec *r, const char *key, size_t kl, unsigned long long val)
{
	if (rec_room_(r, kl + 4 + 22))
		r->n = (size_t)(rec_fmt_u64_(rec_key_(r, key, kl), val) - r->buf);
}

CG_HOT void rec_int_n(struct cg_rec *r, const char *key, size_t kl, long long val)
{
	if (rec_room_(r, kl + 4 + 22))
		r->n = (size_t)(rec_fmt_i64_(rec_key_(r, key, kl), val) - r->buf);
}

CG_HOT void rec_hex_n(struct cg_rec *r, const char *key, size_t kl, unsigned long long val)
{
	if (rec_room_(r, kl + 4 + 22))
		r->n = (size_t)(rec_fmt_hex_(rec_key_(r, key, kl), val, r->json) - r->buf);
}

CG_HOT void rec_bool_n(struct cg_rec *r, const char *key, size_t kl, int val)
{
	char *o;
	if (!rec_room_(r, kl + 4 + 5))
		return;
	o = rec_key_(r, key, kl);
	__builtin_memcpy(o, val ? "true" : "false", val ? 4 : 5);
	r->n = (size_t)(o + (val ? 4 : 5) - r->buf);
}

CG_HOT void rec_word_n(struct cg_rec *r, const char *key, size_t kl, const char *val, size_t vl)
{
	char *o;
	if (!rec_room_(r, kl + vl + 6))
		return;
	o = rec_key_(r, key, kl);
	*o++ = '"';
	__builtin_memcpy(o, val, vl);
	o += vl;
	*o++ = '"';
	r->n = (size_t)(o - r->buf);
}

void rec_str_n(struct cg_rec *r, const char *k, size_t kl, const char *v)
{
	if (!r->on)
		return;
	key(r, k, kl);
	if (!v) {
		puts_(r, r->json ? "null" : "-");
		return;
	}
	put(r, "\"", 1);
	put_escaped(r, v);
	put(r, "\"", 1);
}

static void elem_sep(struct cg_rec *r);

void rec_raw_elems(struct cg_rec *r, const char *raw, size_t len)
{
	if (!r->on || !len)
		return;
	elem_sep(r);
	put(r, raw, len);
}

void rec_open_n(struct cg_rec *r, const char *k, size_t kl, char bracket)
{
	if (!r->on)
		return;
	key(r, k, kl);
	put(r, &bracket, 1);
	r->nfields = 0; /* first element gets no comma */
}

void rec_close(struct cg_rec *r, char bracket)
{
	if (!r->on)
		return;
	put(r, &bracket, 1);
	r->nfields = 1;
}

static void elem_sep(struct cg_rec *r)
{
	if (r->nfields++)
		put(r, r->json ? "," : ";", 1);
}

void rec_elem_str(struct cg_rec *r, const char *v)
{
	if (!r->on)
		return;
	elem_sep(r);
	put(r, "\"", 1);
	put_escaped(r, v ? v : "");
	put(r, "\"", 1);
}

void rec_elem_hex(struct cg_rec *r, unsigned long long v)
{
	if (!r->on)
		return;
	elem_sep(r);
	if (rec_room_(r, 24))
		r->n = (size_t)(rec_fmt_hex_(r->buf + r->n, v, r->json) - r->buf);
}

void rec_elem_raw(struct cg_rec *r, const char *v)
{
	if (!r->on)
		return;
	elem_sep(r);
	puts_(r, v);
}

void rec_end(struct cg_rec *r)
{
	const char *labels[CG_LABEL_DEPTH + 1];
	char base_cut[CG_LABEL_LEN];
	int nl, cut;

	if (!r->on)
		return;
	/* The thread's label stack (labels.h): nothing but a TLS load when
	 * no label is set. */
	if (!r->trunc && (nl = cg_labels_get(labels, CG_LABEL_DEPTH + 1, cg_cfg.label, base_cut, &cut)) > 0) {
		rec_open(r, "labels", '[');
		for (int i = 0; i < nl; i++)
			rec_elem_str(r, labels[i]);
		rec_close(r, ']');
		if (cut) /* a label ending in CG_LABEL_MORE is a prefix, not a name */
			rec_bool(r, "labels_truncated", 1);
	}
	if (r->trunc) {
		r->trunc = 0;
		if (r->json) {
			/* Cut back to the last ',' outside any string: everything
			 * before it is complete values. Then close the brackets
			 * still open at that point and mark the record. */
			size_t cut = 0;
			int instr = 0, sq = 0, cu = 0, cut_sq = 0, cut_cu = 0;
			for (size_t i = 0; i < r->n; i++) {
				char c = r->buf[i];
				if (instr) {
					if (c == '\\')
						i++;
					else if (c == '"')
						instr = 0;
					continue;
				}
				if (c == '"')
					instr = 1;
				else if (c == '[')
					sq++;
				else if (c == ']')
					sq--;
				else if (c == '{')
					cu++;
				else if (c == '}')
					cu--;
				else if (c == ',') {
					cut = i;
					cut_sq = sq;
					cut_cu = cu;
				}
			}
			r->n = cut;
			while (cut_sq-- > 0)
				r->buf[r->n++] = ']';
			while (cut_cu-- > 1)
				r->buf[r->n++] = '}';
			memcpy(r->buf + r->n, ",\"trunc\":true", 13);
			r->n += 13;
		} else {
			memcpy(r->buf + r->n, " trunc=1", 8);
			r->n += 8;
		}
	}
	if (r->json)
		r->buf[r->n++] = '}';
	if (r->human == 2) { /* fatal: one thread at a time (crashlog's crash_busy) */
		static char fatal_prefix[160], fatal_out[2 * CG_REC_MAX];
		text_prefix(fatal_prefix, sizeof fatal_prefix, r->wlevel, r->ts, NULL);
		emit_line(fatal_out, cg_log_text_block(r->buf, r->n, fatal_prefix, fatal_out, sizeof fatal_out),
			  r->level, r->ts);
		return;
	}
	if (r->human) {
		char prefix[160], out[2 * CG_REC_MAX];
		text_prefix(prefix, sizeof prefix, r->wlevel, r->ts, NULL);
		emit_line(out, cg_log_text_block(r->buf, r->n, prefix, out, sizeof out), r->level, r->ts);
		return;
	}
	r->buf[r->n++] = '\n';
	emit_line(r->buf, r->n, r->level, r->ts);
}

static void (*_Atomic warn_writer)(const char *msg);

void cg_warn_writer_set(void (*w)(const char *msg))
{
	atomic_store(&warn_writer, w);
}

void cg_warn(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int saved = errno;
	void (*w)(const char *) = atomic_load_explicit(&warn_writer, memory_order_relaxed);
	if (!w || !cg_log_on(CG_L_WARN))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	w(msg);
	errno = saved;
}

const char *cg_result_name(int rc)
{
	switch (rc) {
#define R(v, n)                                                                                                        \
	case v:                                                                                                        \
		return n;
		R(0, "CUDA_SUCCESS")
		R(1, "CUDA_ERROR_INVALID_VALUE")
		R(2, "CUDA_ERROR_OUT_OF_MEMORY")
		R(3, "CUDA_ERROR_NOT_INITIALIZED")
		R(4, "CUDA_ERROR_DEINITIALIZED")
		R(100, "CUDA_ERROR_NO_DEVICE")
		R(101, "CUDA_ERROR_INVALID_DEVICE")
		R(200, "CUDA_ERROR_INVALID_IMAGE")
		R(201, "CUDA_ERROR_INVALID_CONTEXT")
		R(400, "CUDA_ERROR_INVALID_HANDLE")
		R(401, "CUDA_ERROR_ILLEGAL_STATE")
		R(500, "CUDA_ERROR_NOT_FOUND")
		R(600, "CUDA_ERROR_NOT_READY")
		R(700, "CUDA_ERROR_ILLEGAL_ADDRESS")
		R(719, "CUDA_ERROR_LAUNCH_FAILED")
		R(801, "CUDA_ERROR_NOT_SUPPORTED")
		R(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")
		R(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED")
		R(902, "CUDA_ERROR_STREAM_CAPTURE_MERGE")
		R(903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED")
		R(904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED")
		R(905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION")
		R(906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT")
		R(907, "CUDA_ERROR_CAPTURED_EVENT")
		R(908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD")
		R(910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE")
		R(999, "CUDA_ERROR_UNKNOWN")
#undef R
	default:
		return "CUDA_ERROR_OTHER";
	}
}
