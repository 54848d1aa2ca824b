/*
 * shim/sink.c -- where records go: the log file or the program's stderr,
 * bound by the first record and written only while it names the file it
 * was bound to (log.h's contract; docs/design.md, "The sink never harms the
 * host"). The record builder and the per-thread batches are log.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "locks.h"
#include "log.h"
#include "sink.h"
#include "state.h"

/* log_fd -1: a file sink not opened yet; the first record opens it
 * (sink_open), so a process that records nothing leaves no file. Read with
 * an acquire load, published with a release store after the identity. */
static int log_fd = 2;
static char log_path[4096];
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
int cg_sink_pid;
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
	cg_sink_pid = (int)getpid();
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
static _Atomic int sink_fatal; /* a fatal signal is being handled: no waiting on open_lock */

/* This thread waits on no lock (cg_sink_nowait: the dump's watchdog). */
static __thread __attribute__((tls_model("initial-exec"))) int sink_nowait;

void cg_sink_nowait(int on)
{
	sink_nowait = on;
}

static int sink_open(void);

int cg_sink_open_nowait(void)
{
	int r = 0;
	if (__atomic_load_n(&log_fd, __ATOMIC_ACQUIRE) < 0) {
		sink_nowait++;
		r = sink_open() < 0 ? -1 : 0;
		sink_nowait--;
	}
	return r;
}

static int sink_open(void)
{
	int fd, e = 0;
	if (atomic_load_explicit(&sink_fatal, memory_order_relaxed) || sink_nowait) {
		/* The interrupted code may hold open_lock: try it a few times,
		 * else leave the records unwritten (the other opener's records
		 * go to its file, the fatal ones are lost: the race is here). */
		int tries = 0;
		while (pthread_mutex_trylock(&open_lock) != 0) {
			struct timespec pause = {0, 1000000};
			if (++tries > 50)
				return -1;
			nanosleep(&pause, NULL);
		}
	} else {
		pthread_mutex_lock(&open_lock);
	}
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
			     : atomic_load(&sink_fatal)
				 ? "open failed in a fatal-signal handler" /* no strerror there */
				 : strerror(e));
	pthread_mutex_unlock(&open_lock);
	return __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);
}

void cg_sink_after_fork_child(void)
{
	cg_sink_pid = (int)getpid();
	/* If the path names the pid, the child gets its own file, opened by
	 * its first record. */
	if (cg_cfg.log_file && strstr(cg_cfg.log_file, "%p") && log_fd != 1 && log_fd != 2) {
		int old = log_fd;
		if (cg_log_open() == 0 && old > 2)
			close(old);
	}
}

/* Does log_fd still name the file it was bound to? One fstat per write:
 * writes are whole batches or error/warn lines. When it does not, the sink
 * is dead for good (there is nowhere safe to say so). */
static int sink_ours(void)
{
	struct stat st;
	if (__atomic_load_n(&log_fd, __ATOMIC_ACQUIRE) < 0 && sink_open() < 0)
		return 0;
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
void cg_sink_write(const char *buf, size_t len)
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

void cg_sink_fatal(int on)
{
	atomic_store(&sink_fatal, on);
}
