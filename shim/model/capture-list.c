/*
 * shim/model/capture-list.c -- the live captures listed whole: at exit (the
 * ones never ended, named abandoned) and for the crash log and the dump.
 * Split from captures.c (its begin, end and links) by concern.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

/* At exit: captures still open (begun, never ended: an exception between
 * begin and end, or a thread that died) are named abandoned, the first max
 * of them, whose ids go to ids; returns how many are open in all. */
int model_capture_exit(uint64_t *ids, int max, int *n_named)
{
	struct cap_snap open_caps[CAP_NOTE_MAX];
	struct cg_capture *c;
	int n_open = 0, n_open_all = 0;
	if (max > CAP_NOTE_MAX)
		max = CAP_NOTE_MAX;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		n_open_all++;
		if (n_open < max) {
			model_capture_snap_locked(c, &open_caps[n_open++]);
			c->brec = 0;
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
	for (int i = 0; i < n_open; i++) {
		if (model_caprec)
			model_caprec->abandoned(&open_caps[i], "exit", NULL, 0, 0);
		ids[i] = open_caps[i].id;
	}
	*n_named = n_open;
	return n_open_all;
}

int model_capture_live_try(struct model_live_cap *out, int max)
{
	struct cg_capture *c;
	int n = 0, tries = 0;
	while (pthread_mutex_trylock(&model_cap_lock) != 0) {
		struct timespec pause = {0, 1000000};
		if (++tries > 50)
			return -1;
		nanosleep(&pause, NULL);
	}
	CAP_EACH(c)
	{
		if (n < max) {
			out[n].id = c->id;
			out[n].stream = c->stream;
			out[n].graph = c->into ? c->into : c->bgraph;
			out[n].tid = c->tid;
			out[n].mode = c->mode;
			out[n].invalid = c->invalid;
			out[n].site = c->site;
			out[n].t0 = c->t0;
			memcpy(out[n].tname, c->tname, sizeof out[n].tname);
		}
		n++;
	}
	pthread_mutex_unlock(&model_cap_lock);
	return n;
}

/* A reset destroyed the streams of every live capture (model/reset.c,
 * where the process used one device): each is dropped as if never begun,
 * with no record (its end, if the application still calls it, finds no
 * capture and the driver answers). Its begin site settles as an end
 * would settle it. */
int model_capture_drop_all(void)
{
	struct cg_capture *c, *next;
	int n = 0;
	pthread_mutex_lock(&model_cap_lock);
	c = model_cap_list.head;
	model_cap_list.head = model_cap_list.tail = NULL;
	pthread_mutex_unlock(&model_cap_lock);
	for (; c; c = next) {
		next = c->next;
		atomic_fetch_sub(&cg_live_captures, 1);
		cg_site_settle(c->site);
		free(c->l);
		free(c);
		n++;
	}
	return n;
}
