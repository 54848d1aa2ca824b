/*
 * tools/report-symbols.c -- call-site frames "MODULE+0xOFF" and
 * "MODULE:SYMBOL+0xOFF" turned into "function (file:line)" at report time
 * (and "py:/CWD/x.py:N:f" Python frames shown as "py:x.py:N:f"),
 * with elfutils libdw, from the files the shim's "module" records name
 * (path and build-id of each module a site mentions).
 *
 * A frame is left as the shim wrote it when its module has no module record
 * (an older log), the file is gone, or the file on disk is not the one that
 * ran (its build-id differs: said once per module on stderr, and listed in
 * the report's "stale_modules"). Frames are return addresses, so the line is
 * looked up one byte before.
 */
#define _GNU_SOURCE 1 /* asprintf */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* One module file, opened at most once per report. */
struct rp_sym_mod {
	char *path, *build_id; /* build_id as logged (hex), or NULL */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias, load_vaddr; /* load_vaddr: first PT_LOAD, page-aligned */
	int state;		    /* 0 not opened, 1 usable, -1 not usable */
};

static const Dwfl_Callbacks rp_sym_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static char rp_sym_cwd[PATH_MAX];

static void rp_sym_open(struct rp_sym_mod *m, json_t *stale)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char disk[2 * 64 + 1] = "";
	size_t i, n;
	Elf *elf;

	m->state = -1;
	m->dwfl = dwfl_begin(&rp_sym_callbacks);
	if (!m->dwfl)
		return;
	m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, -1, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod || !(elf = dwfl_module_getelf(m->mod, &m->bias))) {
		fprintf(stderr, "cgshim report: %s: cannot read it (%s); its frames stay as offsets\n", m->path,
			dwfl_errmsg(-1));
		return;
	}
	n = (size_t)dwfl_module_build_id(m->mod, &bits, &vaddr);
	for (i = 0; (int)n > 0 && i < n && 2 * i + 2 < sizeof disk; i++)
		sprintf(disk + 2 * i, "%02x", bits[i]);
	if (m->build_id && strcmp(m->build_id, disk)) {
		fprintf(stderr,
			"cgshim report: %s changed since the run (build-id %s in the log, %s on disk): "
			"its frames stay as offsets; rebuild or point at the binary that ran\n",
			m->path, m->build_id, *disk ? disk : "none");
		json_array_append_new(
		    stale, json_pack("{s:s,s:s,s:s}", "path", m->path, "logged", m->build_id, "on_disk", disk));
		return;
	}
	{
		size_t np, k;
		m->load_vaddr = (GElf_Addr)-1;
		if (elf_getphdrnum(elf, &np) == 0)
			for (k = 0; k < np; k++) {
				GElf_Phdr ph;
				if (gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_LOAD &&
				    ph.p_vaddr < m->load_vaddr)
					m->load_vaddr = ph.p_vaddr;
			}
		if (m->load_vaddr == (GElf_Addr)-1)
			m->load_vaddr = 0;
		m->load_vaddr &= ~(GElf_Addr)0xfff;
	}
	m->state = 1;
}

/* The shortest useful spelling of a source path: relative to the current
 * directory when under it, else the last two components. */
static const char *rp_sym_short(const char *file)
{
	size_t l = strlen(rp_sym_cwd);
	const char *p;
	int slashes = 0;

	if (l && !strncmp(file, rp_sym_cwd, l) && file[l] == '/')
		return file + l + 1;
	if (file[0] != '/')
		return file;
	for (p = file + strlen(file); p > file; p--)
		if (p[-1] == '/' && ++slashes == 2)
			return p;
	return file;
}

/* Symbol sym's address in the module (bias included), or 0. */
static GElf_Addr rp_sym_lookup(struct rp_sym_mod *m, const char *sym, size_t len)
{
	int i, n = dwfl_module_getsymtab(m->mod);
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *name = dwfl_module_getsym_info(m->mod, i, &s, &a, NULL, NULL, NULL);
		if (name && strlen(name) == len && !strncmp(name, sym, len) && a)
			return a;
	}
	return 0;
}

/* "function (file:line)" for one frame of module m, or NULL. */
static char *rp_sym_frame(struct rp_sym_mod *m, const char *sym, size_t symlen, unsigned long long off)
{
	GElf_Addr addr, base;
	const char *fn, *file;
	Dwfl_Line *line;
	int lineno = 0;
	char *out = NULL;

	if (sym) {
		base = rp_sym_lookup(m, sym, symlen);
		if (!base)
			return NULL;
	} else {
		base = m->load_vaddr + m->bias;
	}
	addr = base + off - 1;
	fn = dwfl_module_addrname(m->mod, addr);
	line = dwfl_module_getsrc(m->mod, addr);
	file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (fn && file && asprintf(&out, "%s (%s:%d)", fn, rp_sym_short(file), lineno) < 0)
		out = NULL;
	else if (fn && !file && sym == NULL && asprintf(&out, "%s", fn) < 0)
		out = NULL;
	return out;
}

struct rp_sym_ctx {
	struct rp_sym_mod *mods;
	size_t nmods;
	json_t *by_name; /* "pid\x1fname" -> index into mods */
	json_t *cache;	 /* "pid\x1fframe" -> result string or null */
	json_t *stale;
};

static struct rp_sym_mod *rp_sym_mod_of(struct rp_sym_ctx *c, long long pid, const char *name, size_t len)
{
	char key[512];
	json_t *ix;
	snprintf(key, sizeof key, "%lld\x1f%.*s", pid, (int)len, name);
	ix = json_object_get(c->by_name, key);
	return ix ? &c->mods[json_integer_value(ix)] : NULL;
}

/* The symbolised text of a frame string, or NULL to keep it. Cached. */
static const char *rp_sym_text(struct rp_sym_ctx *c, long long pid, const char *fr)
{
	char key[1024];
	const char *plus, *colon, *sym = NULL;
	unsigned long long off;
	struct rp_sym_mod *m;
	size_t symlen = 0;
	json_t *v;
	char *end, *out;

	/* A Python frame of the user's code under the current directory is
	 * shown relative to it. */
	if (!strncmp(fr, "py:/", 4)) {
		size_t l = strlen(rp_sym_cwd);
		if (!l || strncmp(fr + 3, rp_sym_cwd, l) || fr[3 + l] != '/')
			return NULL;
		snprintf(key, sizeof key, "py:%s", fr + 3 + l + 1);
		json_object_set_new(c->cache, fr, json_string(key));
		return json_string_value(json_object_get(c->cache, fr));
	}
	plus = strstr(fr, "+0x");
	if (!plus || !strncmp(fr, "py:", 3) || !strncmp(fr, "pylib:", 6))
		return NULL;
	snprintf(key, sizeof key, "%lld\x1f%s", pid, fr);
	if ((v = json_object_get(c->cache, key)))
		return json_string_value(v);
	off = strtoull(plus + 3, &end, 16);
	if (*end)
		return NULL;
	colon = memchr(fr, ':', (size_t)(plus - fr));
	m = rp_sym_mod_of(c, pid, fr, (size_t)((colon ? colon : plus) - fr));
	if (colon) {
		sym = colon + 1;
		symlen = (size_t)(plus - sym);
	}
	out = NULL;
	if (m) {
		if (!m->state)
			rp_sym_open(m, c->stale);
		if (m->state > 0)
			out = rp_sym_frame(m, sym, symlen, off);
	}
	json_object_set_new(c->cache, key, out ? json_string(out) : json_null());
	free(out);
	return json_string_value(json_object_get(c->cache, key));
}

static void rp_sym_value(struct rp_sym_ctx *c, long long pid, json_t *obj, const char *k, json_t *v)
{
	size_t i;
	json_t *e;
	const char *t;

	if (json_is_string(v)) {
		if ((t = rp_sym_text(c, pid, json_string_value(v))))
			json_object_set_new(obj, k, json_string(t));
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
		{
			if (json_is_string(e) && (t = rp_sym_text(c, pid, json_string_value(e))))
				json_array_set_new(v, i, json_string(t));
		}
	}
}

static int rp_sym_same(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

json_t *rp_symbolise(struct rp_log *log)
{
	struct rp_sym_ctx *c = calloc(1, sizeof *c);
	size_t i;

	if (!c)
		return json_array();
	if (!getcwd(rp_sym_cwd, sizeof rp_sym_cwd))
		rp_sym_cwd[0] = 0;
	c->by_name = json_object();
	c->cache = json_object();
	c->stale = json_array();
	for (i = 0; i < log->n; i++) {
		const json_t *j;
		const char *name, *path;
		char key[512];
		struct rp_sym_mod *m;
		if (log->recs[i].kind != RP_EV_MODULE)
			continue;
		j = rp_j(log, i);
		name = rp_str(j, "name");
		path = rp_str(j, "path");
		if (!name || !path)
			continue;
		snprintf(key, sizeof key, "%lld\x1f%s", log->recs[i].pid, name);
		if (json_object_get(c->by_name, key))
			continue;
		m = realloc(c->mods, (c->nmods + 1) * sizeof *m);
		if (!m)
			break;
		c->mods = m;
		m = &c->mods[c->nmods];
		memset(m, 0, sizeof *m);
		m->path = strdup(path);
		m->build_id = rp_str(j, "build_id") ? strdup(rp_str(j, "build_id")) : NULL;
		/* One file shared by several processes is opened once. */
		for (size_t k = 0; k < c->nmods; k++)
			if (!strcmp(c->mods[k].path, path) && rp_sym_same(c->mods[k].build_id, m->build_id)) {
				free(m->path);
				free(m->build_id);
				json_object_set_new(c->by_name, key, json_integer((json_int_t)k));
				m = NULL;
				break;
			}
		if (!m)
			continue;
		json_object_set_new(c->by_name, key, json_integer((json_int_t)c->nmods));
		c->nmods++;
	}
	/* Symbolised as records are read (rp_j): each distinct frame once,
	 * by the cache. The stale list fills as frames of those modules are met,
	 * and is owned by the log. */
	rp_fetch_set_sym(log, c, c->stale);
	return c->stale;
}

void rp_sym_apply(void *ctx, const struct rp_rec *r, json_t *j)
{
	long long pid = r->pid;
	struct rp_sym_ctx *c = ctx;
	const char *k;
	json_t *v;
	void *tmp;
	if (!c || (!c->nmods && !rp_sym_cwd[0]) || r->kind == RP_EV_MODULE)
		return;
	json_object_foreach_safe(j, tmp, k, v) rp_sym_value(c, pid, j, k, v);
}

void rp_sym_free(void *ctx)
{
	struct rp_sym_ctx *c = ctx;
	size_t i;
	if (!c)
		return;
	for (i = 0; i < c->nmods; i++) {
		if (c->mods[i].dwfl)
			dwfl_end(c->mods[i].dwfl);
		free(c->mods[i].path);
		free(c->mods[i].build_id);
	}
	free(c->mods);
	json_decref(c->by_name);
	json_decref(c->cache);
	free(c);
}
