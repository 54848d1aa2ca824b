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
#include "labels.h"
#include "log.h"
#include "state.h"

int cg_log_level = CG_L_WARN;
static void tb_after_fork(void);
/* log_fd -1: a file sink not opened yet; the first record opens it
 * (sink_open), so a process that records nothing leaves no file. Read with
 * an acquire load, published with a release store after the identity. */
static int log_fd = 2;
static char log_path[4096];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* The sink's identity: the file log_fd named when it was bound (opened, or
 * stderr/stdout taken at start-up). A program may close that descriptor and
 * get the same number for a file of its own (fd 2 for a data file, a daemon
 * closing every descriptor, dup2 over ours); records must never land there,
 * so every write first checks that log_fd still names the same file. */
static int log_bound;
static dev_t log_dev;
static ino_t log_ino;
static int log_pipe;	     /* FIFO or socket: a write can raise SIGPIPE */
static _Atomic int log_dead; /* not ours any more, or no reader: records are dropped */
static _Atomic unsigned long long log_seq;
static int log_pid;
/* fd 1 and fd 2 as the program had them when the shim was loaded
 * (cg_log_early, from the constructor, before main). The sink is bound
 * lazily, by the first record: a program that closed fd 2 and opened a data
 * file before its first CUDA call has that file on fd 2 by then. The sink
 * binds to fd 2 (fd 1) only while it names the file it named at load, and
 * is dead otherwise (issue 30). No copy of fd 2 is kept instead: it would
 * hold a pipe's write end open after the program closed its stderr. */
static struct std_id {
	int taken, open;
	dev_t dev;
	ino_t ino;
} std_at_load[3];
/* The preamble (start record) is written just before the process's first
 * other record, not at set-up. */
static void (*preamble_fn)(void);
static _Atomic int preamble_pending;

void cg_log_early(void)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat st;
		std_at_load[fd].open = fstat(fd, &st) == 0;
		std_at_load[fd].dev = std_at_load[fd].open ? st.st_dev : 0;
		std_at_load[fd].ino = std_at_load[fd].open ? st.st_ino : 0;
		std_at_load[fd].taken = 1;
	}
}

/* Does fd (1 or 2) still name the file it named at load? Yes when the load
 * identity was not taken (a unit test links log.c alone). */
static int std_is_original(int fd, const struct stat *st)
{
	const struct std_id *id = &std_at_load[fd];
	return !id->taken || (id->open && st->st_dev == id->dev && st->st_ino == id->ino);
}

/* The log file cannot be used: one plain-text line on the original stderr
 * (when fd 2 still is it), and no records at all. Falling back to stderr
 * would spill the file's JSONL, at info level, into the program's own
 * error output (issue 30). */
static void sink_refused(const char *why)
{
	char q[300], line[512];
	struct stat st;
	int n;
	cg_config_quote(cg_cfg.log_file ? cg_cfg.log_file : "", q, sizeof q);
	n = snprintf(line, sizeof line,
		     "cgshim: warning: cannot open CGSHIM_LOG_FILE \"%s\": %s; no records are written\n", q, why);
	if (n > 0 && fstat(2, &st) == 0 && std_is_original(2, &st))
		(void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void cg_log_set_preamble(void (*fn)(void))
{
	preamble_fn = fn;
	atomic_store(&preamble_pending, fn != NULL);
}

uint64_t cg_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Make fd the sink and remember which file it names. */
static void sink_bind(int fd)
{
	struct stat st;
	log_bound = 1;
	if (fstat(fd, &st) < 0 || ((fd == 1 || fd == 2) && !std_is_original(fd, &st))) {
		/* closed at start-up, or no longer the stream the program was
		 * given: whatever has this number is not ours */
		atomic_store(&log_dead, 1);
		__atomic_store_n(&log_fd, fd, __ATOMIC_RELEASE);
		return;
	}
	log_dev = st.st_dev;
	log_ino = st.st_ino;
	log_pipe = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
	atomic_store(&log_dead, 0);
	__atomic_store_n(&log_fd, fd, __ATOMIC_RELEASE);
}

/* No sink: records are dropped (log_fd is set, so nothing opens again). */
static void sink_dead(void)
{
	log_bound = 1;
	atomic_store(&log_dead, 1);
	__atomic_store_n(&log_fd, 2, __ATOMIC_RELEASE);
}

/* The rank of the process: the first of RANK, LOCAL_RANK,
 * OMPI_COMM_WORLD_RANK, SLURM_PROCID that is set and not empty, read once
 * (rank_read, from cg_log_open) through secure_getenv (a set-id program
 * does not take a path part from its caller). It becomes part of a file
 * name (%r) and of every record's header, so only [A-Za-z0-9_.-], at most
 * 64 characters and no ".." are accepted; anything else is "badrank" (with
 * a warning when %r names the file). NULL: no rank variable set. */
static const char *const rank_vars[] = {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
static const char *log_rank_tok;
static int log_rank_bad;

static void rank_read(void)
{
	log_rank_tok = NULL;
	log_rank_bad = 0;
	for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++) {
		const char *v = secure_getenv(rank_vars[i]);
		size_t l;
		if (!v || !*v)
			continue;
		l = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
		if (v[l] || l > 64 || strstr(v, "..")) {
			log_rank_bad = 1;
			log_rank_tok = "badrank";
		} else {
			log_rank_tok = v;
		}
		return;
	}
}

const char *cg_log_rank(void)
{
	return log_rank_tok;
}

/* The %r token: the rank, "0" when none is set. */
static const char *log_rank(void)
{
	if (log_rank_bad) {
		cg_warn("RANK/LOCAL_RANK/OMPI_COMM_WORLD_RANK/SLURM_PROCID is not a plain token ([A-Za-z0-9_.-], "
			"no \"..\"); %%r in CGSHIM_LOG_FILE becomes \"badrank\"");
		return "badrank";
	}
	return log_rank_tok ? log_rank_tok : "0";
}

/* Expand %p (pid) and %r (rank) into out; returns 0 or -1 if it does not fit. */
static int expand_path(const char *tmpl, char *out, size_t cap)
{
	size_t n = 0;
	const char *rank = NULL;
	if (strstr(tmpl, "%r"))
		rank = log_rank();
	for (const char *p = tmpl; *p; p++) {
		char tmp[32];
		const char *ins = NULL;
		if (p[0] == '%' && p[1] == 'p') {
			snprintf(tmp, sizeof tmp, "%d", (int)getpid());
			ins = tmp;
		} else if (p[0] == '%' && p[1] == 'r') {
			ins = rank;
		}
		if (ins) {
			size_t l = strlen(ins);
			if (n + l >= cap)
				return -1;
			memcpy(out + n, ins, l);
			n += l;
			p++;
			continue;
		}
		if (n + 1 >= cap)
			return -1;
		out[n++] = *p;
	}
	out[n] = 0;
	return 0;
}

int cg_log_open(void)
{
	log_pid = (int)getpid();
	rank_read();
	if (!cg_cfg.log_file || !*cg_cfg.log_file || !strcmp(cg_cfg.log_file, "stderr")) {
		sink_bind(2);
		return 0;
	}
	if (!strcmp(cg_cfg.log_file, "stdout")) {
		sink_bind(1);
		return 0;
	}
	if (expand_path(cg_cfg.log_file, log_path, sizeof log_path) < 0) {
		sink_dead();
		sink_refused("the path is too long");
		return -1;
	}
	log_bound = 0;
	__atomic_store_n(&log_fd, -1, __ATOMIC_RELEASE);
	return 0;
}

/* Open the file sink named by log_path: called by the first record's write.
 * Returns the descriptor written to from now on. */
static int sink_open(void)
{
	int fd, e = 0;
	pthread_mutex_lock(&open_lock);
	fd = __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0) {
		pthread_mutex_unlock(&open_lock);
		return fd;
	}
	/* O_NONBLOCK: a FIFO without a reader fails with ENXIO here instead of
	 * holding the host in open(); cleared below so that writes to a
	 * regular file or a FIFO with a reader behave as usual. */
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (fd < 0) {
		e = errno;
		sink_dead();
	} else {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		/* Keep the descriptor away from 0..2 so a program closing its
		 * stdio and reopening them cannot have our records land in its
		 * own output. */
		if (fd < 3) {
			int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);
			if (hi >= 0) {
				close(fd);
				fd = hi;
			}
		}
		sink_bind(fd);
	}
	if (e)
		sink_refused(e == ENXIO	  ? "a FIFO with no reader"
			     : e == ELOOP ? "log file is a symlink; refused (O_NOFOLLOW)"
					  : strerror(e));
	pthread_mutex_unlock(&open_lock);
	return __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);
}

void cg_log_after_fork_child(void)
{
	tb_after_fork();
	log_pid = (int)getpid();
	pthread_mutex_init(&open_lock, NULL);
	/* If the path names the pid, the child gets its own file, opened by
	 * its first record. */
	if (cg_cfg.log_file && strstr(cg_cfg.log_file, "%p") && log_fd != 1 && log_fd != 2) {
		int old = log_fd;
		if (cg_log_open() == 0 && old > 2)
			close(old);
	}
}

static void sink_write(const char *buf, size_t len);

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
static pthread_mutex_t tb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf *tb_head;
static pthread_key_t tb_key;
static pthread_once_t tb_key_once = PTHREAD_ONCE_INIT;
static _Atomic int tb_off;

static void tb_flush_locked(struct tbuf *b)
{
	if (b->n) {
		sink_write(b->buf, b->n);
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
		sink_write(line, len);
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

void cg_log_flush_all(void)
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

/* Around fork: the list of thread buffers is held across it (a thread
 * exiting in the parent unlinks its buffer under tb_lock), so the child
 * starts from a list no thread was changing; taken last in atfork_prepare
 * (nothing holding tb_lock takes another of the locks taken there). */
void cg_log_atfork_prepare(void)
{
	pthread_mutex_lock(&tb_lock);
}

void cg_log_atfork_parent(void)
{
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
	pthread_mutex_init(&tb_lock, NULL);
}

void cg_log_unbuffered(void)
{
	atomic_store(&tb_off, 1);
	cg_log_flush_all();
}

/* Does log_fd still name the file it was bound to? One fstat per write:
 * writes are whole batches or error/warn lines. When it does not, the sink
 * is dead for good (there is nowhere safe to say so). */
static int sink_ours(void)
{
	struct stat st;
	if (__atomic_load_n(&log_fd, __ATOMIC_ACQUIRE) < 0)
		sink_open();
	if (!log_bound)
		sink_bind(log_fd); /* a record before cg_log_open: the default stderr */
	if (atomic_load_explicit(&log_dead, memory_order_relaxed))
		return 0;
	if (fstat(log_fd, &st) == 0 && st.st_dev == log_dev && st.st_ino == log_ino)
		return 1;
	atomic_store(&log_dead, 1);
	return 0;
}

/* Contract: never changes errno, the signal mask or any disposition, and
 * never raises SIGPIPE in the host. On a pipe or socket, SIGPIPE is blocked
 * for the write; if the write failed with EPIPE and no SIGPIPE was pending
 * before, the one it generated is taken back with a zero-timeout
 * sigtimedwait before the mask is restored (a SIGPIPE that was already
 * pending is the application's and stays). The reader is gone: the sink is
 * dead from then on. */
static void sink_write(const char *buf, size_t len)
{
	int saved = errno, guard = 0, was_pending = 0;
	sigset_t pipe_set, old, pend;
	if (!sink_ours()) {
		errno = saved; /* fstat's EBADF */
		return;
	}
	if (log_pipe) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		if (sigpending(&pend) == 0)
			was_pending = sigismember(&pend, SIGPIPE);
		guard = pthread_sigmask(SIG_BLOCK, &pipe_set, &old) == 0;
	}
	while (len) {
		ssize_t w = write(log_fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE) {
				atomic_store(&log_dead, 1);
				if (guard && !was_pending) {
					struct timespec zero = {0, 0};
					while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
						;
				}
			}
			break; /* nowhere better to report it */
		}
		buf += w;
		len -= (size_t)w;
	}
	if (guard)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
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

static void key(struct cg_rec *r, const char *k, size_t kl)
{
	if (rec_room_(r, kl + 4))
		r->n = (size_t)(rec_key_(r, k, kl) - r->buf);
}

int cg_log_life_level(int repeat)
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

void rec_begin_at(struct cg_rec *r, int level, const char *ev, uint64_t ts)
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
	r->json = cg_cfg.log_format == CG_FMT_JSONL;
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
			if (who_pid != log_pid || !who_len || who_rank != log_rank_tok) {
				size_t w = 0;
#define WCAT(str) (memcpy(who + w, str, sizeof str - 1), w += sizeof str - 1)
				WCAT(e);
				w = (size_t)(rec_fmt_i64_(who + w, log_pid) - who);
				WCAT(f);
				w = (size_t)(rec_fmt_i64_(who + w, cg_gettid()) - who);
				if (log_rank_tok) { /* a token: [A-Za-z0-9_.-]{1,64}, no escaping */
					size_t rl = strlen(log_rank_tok);
					WCAT(",\"rank\":\"");
					memcpy(who + w, log_rank_tok, rl);
					w += rl;
					who[w++] = '"';
				}
#undef WCAT
				who_len = w;
				who_pid = log_pid;
				who_rank = log_rank_tok;
			}
			memcpy(tmp + k, who, who_len);
			k += who_len;
		}
#undef CAT
		l = (int)k;
		r->nfields = 1;
	} else {
		static const char *lv[] = {"", "", "error", "warn", "info", "debug", "trace"};
		char when[72];
		text_stamp(when, sizeof when, ts);
		l = snprintf(tmp, sizeof tmp, "cgshim %s %d:%d %s %s%s%s", when, log_pid, cg_gettid(),
			     level >= 0 && level <= 6 ? lv[level] : "", ev, log_rank_tok ? " rank=" : "",
			     log_rank_tok ? log_rank_tok : "");
	}
	if (l > 0)
		put(r, tmp, (size_t)l < sizeof tmp ? (size_t)l : sizeof tmp - 1);
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
	int nl;

	if (!r->on)
		return;
	/* The thread's label stack (labels.h): nothing but a TLS load when
	 * no label is set. */
	if (!r->trunc && (nl = cg_labels_get(labels, CG_LABEL_DEPTH + 1, cg_cfg.label)) > 0) {
		rec_open(r, "labels", '[');
		for (int i = 0; i < nl; i++)
			rec_elem_str(r, labels[i]);
		rec_close(r, ']');
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
	r->buf[r->n++] = '\n';
	emit_line(r->buf, r->n, r->level, r->ts);
}

void cg_warn(const char *fmt, ...)
{
	struct cg_rec r;
	char msg[512];
	va_list ap;
	int saved = errno;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	rec_begin(&r, CG_L_WARN, CGSHIM_EV_WARNING);
	if (!r.on) {
		errno = saved;
		return;
	}
	rec_str(&r, "msg", msg);
	rec_end(&r);
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
