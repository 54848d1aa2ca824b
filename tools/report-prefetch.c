/*
 * tools/report-prefetch.c -- reading records again (rp_j) quickly: a
 * window of each file read at once, and, while a pass walks the records in
 * order, a second thread that parses the next ones ahead of it. Parsing
 * (jansson) is half of a report's time; on two cores the pass then costs
 * about what parsing alone costs.
 *
 * Contract: rp_pre_take(p, i) gives record i parsed exactly as the pass
 * would have parsed it itself (same bytes, same json_loadb), or NULL when
 * it has not got it (then the caller parses). The worker only reads the
 * files (pread, its own buffers) and builds new objects; the main thread
 * alone touches anything else (symbolisation happens there). At most
 * RP_PRE_AHEAD parsed records wait, so memory stays bounded.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* Bytes of a file read at once, per file and reader. */
#define RP_WINDOW (256 << 10)
/* Records parsed ahead at most, and consecutive rp_j calls that start it. */
#define RP_PRE_AHEAD 512
#define RP_PRE_START 64
/* Records handed over per wake-up, either way. */
#define RP_PRE_BATCH 128

struct rp_win {
	char *buf; /* RP_WINDOW bytes, or NULL until used */
	long long start;
	size_t len;
};

struct rp_reader {
	unsigned nfiles;
	struct rp_win *win; /* one per file */
	char *buf;	    /* a record longer than the window */
	size_t cap;
};

struct rp_reader *rp_reader_new(unsigned nfiles)
{
	struct rp_reader *rd = calloc(1, sizeof *rd);
	if (rd && !(rd->win = calloc((size_t)nfiles + 1, sizeof *rd->win))) {
		free(rd);
		rd = NULL;
	}
	if (rd)
		rd->nfiles = nfiles;
	return rd;
}

void rp_reader_free(struct rp_reader *rd)
{
	unsigned i;
	if (!rd)
		return;
	for (i = 0; i < rd->nfiles; i++)
		free(rd->win[i].buf);
	free(rd->win);
	free(rd->buf);
	free(rd);
}

static int rp_pread_all(int fd, char *buf, size_t len, long long off, size_t *got)
{
	*got = 0;
	while (*got < len) {
		ssize_t n = pread(fd, buf + *got, len - *got, off + (long long)*got);
		if (n <= 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

/* Record r's bytes: from its file's window, refilled by one read when r is
 * outside it (the passes read in time order, mostly file order, so one read
 * serves hundreds of records), or read alone when longer than a window.
 * NULL if the file no longer has them. */
static const char *rp_reader_bytes(struct rp_reader *rd, const int *fds, const struct rp_rec *r)
{
	struct rp_win *w = &rd->win[r->file];
	size_t got;

	if (r->len > RP_WINDOW) {
		if (r->len > rd->cap) {
			char *nb = realloc(rd->buf, r->len);
			if (!nb)
				return NULL;
			rd->buf = nb;
			rd->cap = r->len;
		}
		rp_pread_all(fds[r->file], rd->buf, r->len, r->off, &got);
		return got == r->len ? rd->buf : NULL;
	}
	if (w->buf && r->off >= w->start && r->off + r->len <= w->start + (long long)w->len)
		return w->buf + (r->off - w->start);
	if (!w->buf && !(w->buf = malloc(RP_WINDOW)))
		return NULL;
	rp_pread_all(fds[r->file], w->buf, RP_WINDOW, r->off, &got);
	w->start = r->off;
	w->len = got;
	return got >= r->len ? w->buf : NULL;
}

json_t *rp_reader_parse(struct rp_reader *rd, const int *fds, const struct rp_rec *r)
{
	const char *line = rd ? rp_reader_bytes(rd, fds, r) : NULL;
	json_t *j = line ? json_loadb(line, r->len, 0, NULL) : NULL;
	if (!json_is_object(j)) {
		json_decref(j);
		j = json_object();
	}
	return j;
}

/* ---- the thread that parses ahead ---- */

struct rp_pre {
	const struct rp_log *log;
	const int *fds;
	struct rp_reader *rd; /* the worker's own */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running, stop, waiting, wwait; /* waiting: the pass; wwait: the worker */
	size_t base;			   /* the next record the pass is expected to ask for */
	size_t next;			   /* the next record the worker parses; [base, next) are ready */
	json_t *slot[RP_PRE_AHEAD];
	size_t want;	  /* the pass waits for [base, want] */
	size_t last, run; /* the last index asked, and how many in a row */
};

static void *rp_pre_main(void *arg)
{
	struct rp_pre *p = arg;
	size_t i;
	json_t *j;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->next < p->log->n && p->next - p->base >= RP_PRE_AHEAD) {
			p->wwait = 1;
			pthread_cond_wait(&p->cv, &p->mu);
			p->wwait = 0;
		}
		if (p->stop || p->next >= p->log->n)
			break;
		i = p->next;
		pthread_mutex_unlock(&p->mu);
		j = rp_reader_parse(p->rd, p->fds, &p->log->recs[i]);
		pthread_mutex_lock(&p->mu);
		p->slot[i % RP_PRE_AHEAD] = j;
		p->next = i + 1;
		if (p->waiting && p->next > p->want) /* woken in batches, not per record */
			pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct rp_pre *rp_pre_new(const struct rp_log *log, const int *fds)
{
	struct rp_pre *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->log = log;
	p->fds = fds;
	p->last = (size_t)-2;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	return p;
}

static void rp_pre_stop(struct rp_pre *p)
{
	size_t i;
	if (!p->running)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	for (i = p->base; i < p->next; i++)
		json_decref(p->slot[i % RP_PRE_AHEAD]);
	p->running = 0;
	p->stop = 0;
}

void rp_pre_free(struct rp_pre *p)
{
	if (!p)
		return;
	rp_pre_stop(p);
	rp_reader_free(p->rd);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

json_t *rp_pre_take(struct rp_pre *p, size_t i)
{
	json_t *j;

	if (!p)
		return NULL;
	p->run = i == p->last + 1 ? p->run + 1 : 0;
	p->last = i;
	if (p->running && (i < p->base || i >= p->base + RP_PRE_AHEAD))
		rp_pre_stop(p); /* the pass went elsewhere */
	if (!p->running) {
		if (p->run < RP_PRE_START || i + 1 >= p->log->n)
			return NULL;
		if (!p->rd && !(p->rd = rp_reader_new(p->log->nfiles)))
			return NULL;
		p->base = p->next = i + 1; /* from the next one on */
		if (pthread_create(&p->th, NULL, rp_pre_main, p) != 0)
			return NULL;
		p->running = 1;
		return NULL;
	}
	pthread_mutex_lock(&p->mu);
	if (p->next <= i) {
		p->want = i + RP_PRE_BATCH < p->log->n ? i + RP_PRE_BATCH : p->log->n - 1;
		p->waiting = 1;
		if (p->wwait)
			pthread_cond_broadcast(&p->cv);
		while (p->next <= i)
			pthread_cond_wait(&p->cv, &p->mu);
		p->waiting = 0;
	}
	for (; p->base < i; p->base++) /* skipped by the pass */
		json_decref(p->slot[p->base % RP_PRE_AHEAD]);
	j = p->slot[i % RP_PRE_AHEAD];
	p->base = i + 1;
	if (p->wwait && p->next - p->base <= RP_PRE_AHEAD - RP_PRE_BATCH)
		pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return j;
}
