/* shim/site.c -- interned call sites (native frames + Python frames). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "resolve.h"
#include "site.h"
#include "table.h"

struct site_key {
	void *pc[CG_BT_MAX];
	unsigned char n;
	char py[CG_PY_MAX];
};

struct site_ent {
	struct site_key key;
	uint32_t id;
	UT_hash_handle hh;
};

static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static struct site_ent *site_tab;
static struct site_ent **site_by_id;
static uint32_t site_n, site_cap;

void cg_site_lock(void)
{
	pthread_mutex_lock(&site_lock);
}
void cg_site_unlock(void)
{
	pthread_mutex_unlock(&site_lock);
}

/* ---- Python frames, through the C API looked up at run time ------------- */

static struct {
	int tried, ok, retry;
	int (*is_init)(void);
	int (*gil_check)(void);
	void *(*get_frame)(void);
	int (*lineno)(void *);
	void *(*get_code)(void *);
	void *(*get_back)(void *);
	void *(*getattr)(void *, const char *);
	const char *(*utf8)(void *);
	void (*decref)(void *);
} py;

static void py_resolve(void)
{
	/* A failing lookup allocates an error string; look again only now
	 * and then, never on a hot path (sites are lifecycle-only). */
	if (py.ok || (py.tried && ++py.retry % 64))
		return;
	py.tried = 1;
	if (!cg_real_dlsym)
		return;
#define PYSYM(f, n) *(void **)&py.f = cg_real_dlsym(RTLD_DEFAULT, n)
	PYSYM(is_init, "Py_IsInitialized");
	if (!py.is_init)
		return;
	PYSYM(gil_check, "PyGILState_Check");
	PYSYM(get_frame, "PyEval_GetFrame");
	PYSYM(lineno, "PyFrame_GetLineNumber");
	PYSYM(get_code, "PyFrame_GetCode");
	PYSYM(get_back, "PyFrame_GetBack");
	PYSYM(getattr, "PyObject_GetAttrString");
	PYSYM(utf8, "PyUnicode_AsUTF8");
	PYSYM(decref, "Py_DecRef");
#undef PYSYM
	py.ok = py.gil_check && py.get_frame && py.lineno && py.get_code && py.get_back && py.getattr &&
		py.utf8 && py.decref;
}

static const char *py_str_attr(void *obj, const char *name, void **hold)
{
	void *a = py.getattr(obj, name);
	*hold = a;
	return a ? py.utf8(a) : NULL;
}

/* Fill out with "py:file:line:func;..." innermost first. Only when this
 * thread holds the GIL: then the interpreter is ours to read. */
static void py_frames(char *out, size_t cap, int max)
{
	void *f, *owned = NULL;
	size_t n = 0;
	out[0] = 0;
	if (max <= 0)
		return;
	py_resolve();
	if (!py.ok || !py.is_init() || !py.gil_check())
		return;
	f = py.get_frame();
	for (int i = 0; f && i < max; i++) {
		void *code = py.get_code(f), *h1 = NULL, *h2 = NULL, *back;
		const char *file = code ? py_str_attr(code, "co_filename", &h1) : NULL;
		const char *func = code ? py_str_attr(code, "co_name", &h2) : NULL;
		int line = py.lineno(f);
		int w = snprintf(out + n, cap - n, "%spy:%s:%d:%s", n ? ";" : "", file ? file : "?", line,
				 func ? func : "?");
		if (h1)
			py.decref(h1);
		if (h2)
			py.decref(h2);
		if (code)
			py.decref(code);
		if (w < 0 || (size_t)w >= cap - n) {
			out[n] = 0;
			break;
		}
		n += (size_t)w;
		back = py.get_back(f); /* new reference */
		if (owned)
			py.decref(owned);
		owned = back;
		f = back;
	}
	if (owned)
		py.decref(owned);
}

static int cuda_frame(void *pc)
{
	Dl_info di;
	const char *base;
	if (!dladdr(pc, &di) || !di.dli_fname)
		return 0;
	base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return !strncmp(base, "libcgshim", 9) || !strncmp(base, "libcudart", 9) || !strncmp(base, "libcuda.", 8);
}

uint32_t cg_site_here(int skip)
{
	struct site_key k;
	struct site_ent *e;
	void *pcs[CG_BT_MAX + 8];
	int n, depth = (int)cg_cfg.backtrace;
	uint32_t id;

	if (depth <= 0 && cg_cfg.python_frames <= 0)
		return 0;
	memset(&k, 0, sizeof k);
	if (depth > 0) {
		int i = skip + 1;
		n = backtrace(pcs, CG_BT_MAX + 8);
		/* The user's call site is the first frame outside the shim and
		 * the CUDA runtime/driver (runtime hooks put both on the stack). */
		while (i < n - 1 && cuda_frame(pcs[i]))
			i++;
		for (; i < n && k.n < depth; i++)
			k.pc[k.n++] = pcs[i];
	}
	py_frames(k.py, sizeof k.py, (int)cg_cfg.python_frames);

	pthread_mutex_lock(&site_lock);
	HASH_FIND(hh, site_tab, &k, sizeof k, e);
	if (e) {
		id = e->id;
		pthread_mutex_unlock(&site_lock);
		return id;
	}
	if (site_n + 1 >= site_cap) {
		uint32_t nc = site_cap ? site_cap * 2 : 256;
		struct site_ent **nb = realloc(site_by_id, nc * sizeof *nb);
		if (!nb) {
			pthread_mutex_unlock(&site_lock);
			return 0;
		}
		site_by_id = nb;
		site_cap = nc;
	}
	e = calloc(1, sizeof *e);
	if (!e) {
		pthread_mutex_unlock(&site_lock);
		return 0;
	}
	e->key = k;
	e->id = ++site_n;
	site_by_id[e->id] = e;
	HASH_ADD(hh, site_tab, key, sizeof k, e);
	if (cg_table_oom) {
		cg_table_oom = 0;
		site_by_id[e->id] = NULL;
		site_n--;
		free(e);
		pthread_mutex_unlock(&site_lock);
		return 0;
	}
	id = e->id;
	pthread_mutex_unlock(&site_lock);
	return id;
}

static void frame_text(void *pc, char *out, unsigned cap)
{
	Dl_info di;
	if (dladdr(pc, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		base = base ? base + 1 : di.dli_fname;
		if (di.dli_sname && di.dli_saddr)
			snprintf(out, cap, "%s:%s+0x%lx", base, di.dli_sname,
				 (unsigned long)((char *)pc - (char *)di.dli_saddr));
		else
			snprintf(out, cap, "%s+0x%lx", base, (unsigned long)((char *)pc - (char *)di.dli_fbase));
	} else {
		snprintf(out, cap, "%p", pc);
	}
}

static int site_copy(uint32_t site, struct site_key *k)
{
	int ok = 0;
	pthread_mutex_lock(&site_lock);
	if (site && site <= site_n && site_by_id[site]) {
		*k = site_by_id[site]->key;
		ok = 1;
	}
	pthread_mutex_unlock(&site_lock);
	return ok;
}

void rec_site(struct cg_rec *r, const char *key, uint32_t site)
{
	struct site_key k;
	char buf[300];
	if (!r->on || !site_copy(site, &k))
		return;
	rec_open(r, key, '[');
	if (k.py[0]) {
		char *save = NULL, *tok;
		for (tok = strtok_r(k.py, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
			rec_elem_str(r, tok);
	}
	for (int i = 0; i < k.n; i++) {
		frame_text(k.pc[i], buf, sizeof buf);
		rec_elem_str(r, buf);
	}
	rec_close(r, ']');
}

void cg_site_first(uint32_t site, char *out, unsigned cap)
{
	struct site_key k;
	out[0] = 0;
	if (!site_copy(site, &k))
		return;
	if (k.py[0]) {
		char *semi = strchr(k.py, ';');
		if (semi)
			*semi = 0;
		snprintf(out, cap, "%s", k.py);
	} else if (k.n) {
		frame_text(k.pc[0], out, cap);
	}
}
