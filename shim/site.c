/* shim/site.c -- interned call sites (native frames + Python frames). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <execinfo.h>
#include <sys/uio.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "resolve.h"
#include "module.h"
#include "site.h"
#include "table.h"
#include "unwind.h"

struct site_key {
	void *pc[CG_BT_MAX];
	unsigned char n;
	char py[CG_PY_MAX];
};

/* A site whose native walk stopped at a cold frame (cg_site_here_deferred):
 * the frames so far, where to go on from, and the walk's parameters. */
struct site_pend {
	struct cg_unwind_rest *rest;
	void *pcs[CG_BT_MAX + 8];
	int n, want, skip;
	uint64_t cuda;
};

struct site_ent {
	struct site_key key;
	unsigned char *kb; /* compact lookup key: used pcs, then the Python text */
	size_t klen;
	uint32_t id;
	/* pend: not yet interned (key.py only), settled on first use; alias:
	 * once settled, the id of the same site interned before it */
	struct site_pend *pend;
	uint32_t alias;
	char *text;    /* native frames rendered once ("a\nb\n"), on first use */
	char *frag[2]; /* the site as a list body: [0] text, [1] JSON, on first use */
	size_t frag_len[2];
	UT_hash_handle hh;
};

static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

void cg_site_lock_reset(void)
{
	pthread_mutex_init(&site_lock, NULL);
}
static struct site_ent *site_tab;
static struct cg_table site_table = CG_TABLE_INIT("site table"); /* a failed add: the site is not interned (id 0) */
static struct site_ent **site_by_id;
static uint32_t site_n, site_cap;
static _Atomic long long sites_deferred;

long long cg_sites_deferred(void)
{
	return atomic_load_explicit(&sites_deferred, memory_order_relaxed);
}

void cg_site_lock(void)
{
	pthread_mutex_lock(&site_lock);
}
void cg_site_unlock(void)
{
	pthread_mutex_unlock(&site_lock);
}

/* ---- Python frames, through the C API looked up at run time ------------- */

struct py_api {
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
};

/* The resolved C API of both readers below (py_g, py12_g) is written only
 * under py_lock; once a reader's set is complete (ok) its flag is published
 * with a release store and the set never changes again, so a thread that
 * acquires the flag reads it without the lock. Until then each call takes a
 * snapshot under the lock. trylock: a thread that finds the lock busy (or
 * a child forked while it was held) gets no Python frames this time rather
 * than wait. */
static pthread_mutex_t py_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int py_done, py12_done;
static struct py_api py_g;

static void py_resolve_locked(void)
{
	/* A failing lookup allocates an error string; look again only now
	 * and then, never on a hot path (sites are lifecycle-only). */
	if (py_g.ok || (py_g.tried && ++py_g.retry % 64))
		return;
	py_g.tried = 1;
	if (!__atomic_load_n(&cg_real_dlsym, __ATOMIC_ACQUIRE))
		return;
#define PYSYM(f, n) *(void **)&py_g.f = cg_real_dlsym(RTLD_DEFAULT, n)
	PYSYM(is_init, "Py_IsInitialized");
	if (!py_g.is_init)
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
	py_g.ok = py_g.gil_check && py_g.get_frame && py_g.lineno && py_g.get_code && py_g.get_back && py_g.getattr &&
		  py_g.utf8 && py_g.decref;
	if (py_g.ok)
		atomic_store_explicit(&py_done, 1, memory_order_release);
}

/* *out = the API as resolved so far (all NULL when unavailable). */
static void py_resolve(struct py_api *out)
{
	if (atomic_load_explicit(&py_done, memory_order_acquire)) {
		*out = py_g;
		return;
	}
	memset(out, 0, sizeof *out);
	if (pthread_mutex_trylock(&py_lock))
		return;
	py_resolve_locked();
	*out = py_g;
	pthread_mutex_unlock(&py_lock);
}

/* Frames of installed packages and of the standard library are written
 * "pylib:" and named from the package down (".../site-packages/torch/cuda/
 * graphs.py" -> "torch/cuda/graphs.py"), the user's own as "py:" with the
 * path Python has: a reader looks for the first "py:" frame. */
static const char *py_short(const char *file)
{
	const char *p = strstr(file, "-packages/");
	if (p)
		return p + 10;
	p = strstr(file, "/lib/python3");
	if (p && (p = strchr(p + 12, '/')))
		return p + 1;
	return file;
}

static const char *py_kind(const char *file)
{
	return (strstr(file, "-packages/") || strstr(file, "/lib/python3") || file[0] == '<') ? "pylib" : "py";
}

/* ---- CPython 3.12 frames without the GIL -----------------------------------
 *
 * PyTorch releases the GIL around its CUDA work (capture_begin, replay and
 * every op's dispatch), so the C API above would see no frames exactly where
 * users need them. A thread's own frame chain cannot change while that
 * thread is inside our hook, and code objects and their strings are
 * immutable, so reading them without the GIL is safe if no reference counts
 * are touched and nothing is allocated. The layout is CPython 3.12's
 * (Include/cpython/pystate.h, Include/internal/pycore_frame.h,
 * Include/cpython/code.h, Include/cpython/unicodeobject.h); it is used only
 * when Py_Version says 3.12, every pointer is read through
 * process_vm_readv (a bad address gives EFAULT, never a crash), and every
 * object's type is checked against PyCode_Type / PyUnicode_Type.
 */
#define PY312_TSTATE_CFRAME 56
#define PY312_CFRAME_CURRENT 0
#define PY312_FRAME_CODE 0
#define PY312_FRAME_PREVIOUS 8
#define PY312_FRAME_PREV_INSTR 56
#define PY312_FRAME_OWNER 70
#define PY312_OWNED_BY_CSTACK 3
#define PY312_CODE_FILENAME 112
#define PY312_CODE_NAME 120
#define PY_OB_TYPE 8
#define PY312_STR_LENGTH 16
#define PY312_STR_STATE 32
#define PY312_STR_ASCII_DATA 40

struct py12_api {
	int tried, ok, retry;
	void *(*this_tstate)(void);
	int (*frame_line)(void *);
	void *code_type, *unicode_type;
};
static struct py12_api py12_g; /* under py_lock until py12_done (see py_g) */

static int safe_read(void *dst, const void *src, size_t n)
{
	struct iovec local = {dst, n}, remote = {(void *)src, n};
	if (!src)
		return -1;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static void py12_resolve_locked(void)
{
	const unsigned long *ver;
	if (py12_g.ok || (py12_g.tried && ++py12_g.retry % 64) || !__atomic_load_n(&cg_real_dlsym, __ATOMIC_ACQUIRE))
		return;
	py12_g.tried = 1;
	ver = cg_real_dlsym(RTLD_DEFAULT, "Py_Version");
	if (!ver || (*ver >> 16) != 0x030C)
		return;
	*(void **)&py12_g.this_tstate = cg_real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	*(void **)&py12_g.frame_line = cg_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLine");
	py12_g.code_type = cg_real_dlsym(RTLD_DEFAULT, "PyCode_Type");
	py12_g.unicode_type = cg_real_dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	py12_g.ok = py12_g.this_tstate && py12_g.frame_line && py12_g.code_type && py12_g.unicode_type;
	if (py12_g.ok)
		atomic_store_explicit(&py12_done, 1, memory_order_release);
}

static void py12_resolve(struct py12_api *out)
{
	if (atomic_load_explicit(&py12_done, memory_order_acquire)) {
		*out = py12_g;
		return;
	}
	memset(out, 0, sizeof *out);
	if (pthread_mutex_trylock(&py_lock))
		return;
	py12_resolve_locked();
	*out = py12_g;
	pthread_mutex_unlock(&py_lock);
}

/* The frame walk reads through process_vm_readv until one walk has found a
 * code object of PyCode_Type at the layout's offsets; from then on it reads
 * the thread's own frames and their code objects directly. That is as safe:
 * a thread's frame chain cannot change while the thread is inside our hook,
 * a live frame keeps its code object (and that its arena) alive, and the
 * walk already hands each frame to CPython's own frame_line. What the first
 * walk guards against is a layout that is not 3.12's; what direct reads save
 * is two system calls per frame (0.3-3.5 us each: 8 frames cost 50 us in a
 * sandbox). Strings are still read safely, once per code object (cache). */
static _Atomic int py12_trusted;

static int py12_read(void *dst, const void *src, size_t n)
{
	if (!src)
		return -1;
	if (!atomic_load_explicit(&py12_trusted, memory_order_relaxed))
		return safe_read(dst, src, n);
	memcpy(dst, src, n);
	return 0;
}

/* Copy an ASCII str object's text; 0 on success. */
static int py12_ascii(const struct py12_api *py12, void *str, char *out, size_t cap)
{
	void *type;
	long len;
	unsigned state;
	if (py12_read(&type, (char *)str + PY_OB_TYPE, sizeof type) || type != py12->unicode_type ||
	    py12_read(&len, (char *)str + PY312_STR_LENGTH, sizeof len) ||
	    py12_read(&state, (char *)str + PY312_STR_STATE, sizeof state))
		return -1;
	/* compact (bit 5) and ascii (bit 6): the bytes follow the header */
	if (!(state & (1u << 5)) || !(state & (1u << 6)) || len < 0)
		return -1;
	if ((size_t)len >= cap)
		len = (long)cap - 1;
	if (py12_read(out, (char *)str + PY312_STR_ASCII_DATA, (size_t)len))
		return -1;
	out[len] = 0;
	return 0;
}

/* Returns 1 when the walk ran (frames may be empty), 0 when unavailable. */
/* A frame is read with one process_vm_readv of its header and one of its
 * code object's header; the file and function names of a code object are
 * decoded once and kept here, keyed by the code object and the two string
 * objects it points to (a code object reached from a live frame is alive,
 * and holds its strings). A process_vm_readv costs 0.3-3.5 us (bare metal
 * to a sandbox), and a walk of 8 frames that read every field separately
 * made ~100 of them. The lock is only tried: a thread that finds it busy,
 * or a child forked while another thread held it, reads the strings. */
#define PY12_FRAME_HDR 72 /* up to and including owner (70) */
#define PY12_CODE_HDR 128 /* up to and including co_name (120) */
#define PY12_CACHE 128

struct py12_name {
	void *code, *fn, *name;
	char file[160];
	char func[96];
};
static struct py12_name py12_cache[PY12_CACHE];
static pthread_mutex_t py12_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned py12_slot(void *code)
{
	uintptr_t v = (uintptr_t)code >> 4;
	return (unsigned)((v ^ (v >> 7) ^ (v >> 17)) % PY12_CACHE);
}

/* File and function of a code object whose header is hdr: from the cache,
 * else decoded and cached. Returns 0, or -1 when it is not a code object. */
static int py12_names(const struct py12_api *py12, void *code, const unsigned char *hdr, char *file, size_t fcap,
		      char *func, size_t ncap)
{
	void *type, *fn_obj, *name_obj;
	struct py12_name *e;
	memcpy(&type, hdr + PY_OB_TYPE, sizeof type);
	memcpy(&fn_obj, hdr + PY312_CODE_FILENAME, sizeof fn_obj);
	memcpy(&name_obj, hdr + PY312_CODE_NAME, sizeof name_obj);
	if (type != py12->code_type)
		return -1;
	e = &py12_cache[py12_slot(code)];
	if (pthread_mutex_trylock(&py12_lock) == 0) {
		int hit = e->code == code && e->fn == fn_obj && e->name == name_obj;
		if (hit) {
			snprintf(file, fcap, "%s", e->file);
			snprintf(func, ncap, "%s", e->func);
		}
		pthread_mutex_unlock(&py12_lock);
		if (hit)
			return 0;
	}
	if (py12_ascii(py12, fn_obj, file, fcap))
		snprintf(file, fcap, "?");
	if (py12_ascii(py12, name_obj, func, ncap))
		snprintf(func, ncap, "?");
	if (pthread_mutex_trylock(&py12_lock) == 0) {
		e->code = code;
		e->fn = fn_obj;
		e->name = name_obj;
		snprintf(e->file, sizeof e->file, "%s", file);
		snprintf(e->func, sizeof e->func, "%s", func);
		pthread_mutex_unlock(&py12_lock);
	}
	return 0;
}

/* CPython computes a frame's line by walking its code object's line table
 * from the start (_PyCode_CheckLineNumber: a few microseconds for a long
 * module or function, the largest part of a Python site on the GPU host).
 * A (code object, last instruction) pair always maps to the same line, so
 * the answer is kept here, keyed also by the code object's file name object
 * (a code object freed and another allocated at its address is told apart
 * as in the name cache); same locking as the name cache. */
#define PY12_LINES 256
struct py12_line {
	void *code, *instr, *fn;
	int line;
};
static struct py12_line py12_lines[PY12_LINES];

static int py12_line_of(const struct py12_api *py12, void *frame, void *code, const unsigned char *hdr, void *instr)
{
	void *fn;
	memcpy(&fn, hdr + PY312_CODE_FILENAME, sizeof fn);
	uintptr_t v = ((uintptr_t)code >> 4) ^ ((uintptr_t)instr >> 1);
	struct py12_line *e = &py12_lines[(v ^ (v >> 9) ^ (v >> 19)) % PY12_LINES];
	int line = -1;
	if (instr && pthread_mutex_trylock(&py12_lock) == 0) {
		if (e->code == code && e->instr == instr && e->fn == fn)
			line = e->line;
		pthread_mutex_unlock(&py12_lock);
	}
	if (line >= 0)
		return line;
	line = py12->frame_line(frame);
	if (instr && line >= 0 && pthread_mutex_trylock(&py12_lock) == 0) {
		e->code = code;
		e->instr = instr;
		e->fn = fn;
		e->line = line;
		pthread_mutex_unlock(&py12_lock);
	}
	return line;
}

/* Returns 1 when the walk ran (frames may be empty), 0 when unavailable. */
static int py12_frames(const struct py_api *py, char *out, size_t cap, int max)
{
	struct py12_api py12;
	void *ts, *cframe, *frame, *code;
	unsigned char fh[PY12_FRAME_HDR], ch[PY12_CODE_HDR];
	char file[160], func[96];
	size_t n = 0;
	py12_resolve(&py12);
	if (!py12.ok || !py->is_init || !py->is_init())
		return 0;
	ts = py12.this_tstate();
	if (!ts || py12_read(&cframe, (char *)ts + PY312_TSTATE_CFRAME, sizeof cframe) ||
	    py12_read(&frame, (char *)cframe + PY312_CFRAME_CURRENT, sizeof frame))
		return 1;
	for (int i = 0, guard = 0; frame && i < max && guard < 256; guard++) {
		void *prev, *instr;
		if (py12_read(fh, frame, sizeof fh))
			break;
		memcpy(&code, fh + PY312_FRAME_CODE, sizeof code);
		memcpy(&prev, fh + PY312_FRAME_PREVIOUS, sizeof prev);
		memcpy(&instr, fh + PY312_FRAME_PREV_INSTR, sizeof instr);
		if (fh[PY312_FRAME_OWNER] != PY312_OWNED_BY_CSTACK) {
			if (py12_read(ch, code, sizeof ch) ||
			    py12_names(&py12, code, ch, file, sizeof file, func, sizeof func))
				break;
			atomic_store_explicit(&py12_trusted, 1, memory_order_relaxed);
			int w = snprintf(out + n, cap - n, "%s%s:%s:%d:%s", n ? ";" : "", py_kind(file), py_short(file),
					 py12_line_of(&py12, frame, code, ch, instr), func);
			if (w < 0 || (size_t)w >= cap - n) {
				out[n] = 0;
				break;
			}
			n += (size_t)w;
			i++;
		}
		frame = prev;
	}
	return 1;
}

static const char *py_str_attr(const struct py_api *py, void *obj, const char *name, void **hold)
{
	void *a = py->getattr(obj, name);
	*hold = a;
	return a ? py->utf8(a) : NULL;
}

/* Fill out with "py:file:line:func;..." innermost first. Only when this
 * thread holds the GIL: then the interpreter is ours to read. */
static void py_frames(char *out, size_t cap, int max)
{
	void *f, *owned = NULL;
	size_t n = 0;
	struct py_api py;
	out[0] = 0;
	if (max <= 0)
		return;
	py_resolve(&py);
	if (py12_frames(&py, out, cap, max))
		return;
	if (!py.ok || !py.is_init() || !py.gil_check())
		return;
	f = py.get_frame();
	for (int i = 0; f && i < max; i++) {
		void *code = py.get_code(f), *h1 = NULL, *h2 = NULL, *back;
		const char *file = code ? py_str_attr(&py, code, "co_filename", &h1) : NULL;
		const char *func = code ? py_str_attr(&py, code, "co_name", &h2) : NULL;
		int line = py.lineno(f);
		int w = snprintf(out + n, cap - n, "%s%s:%s:%d:%s", n ? ";" : "", file ? py_kind(file) : "py",
				 file ? py_short(file) : "?", line, func ? func : "?");
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

/* Module file name of pc. _dl_find_object (glibc >= 2.35) is a lock-free
 * lookup; dladdr also searches the symbol table (linear in large
 * libraries such as libtorch), so it is only the fallback. */
extern int _dl_find_object(void *pc, struct dl_find_object *result) __attribute__((weak));

static const char *module_of(void *pc)
{
	Dl_info di;
	if (_dl_find_object) {
		struct dl_find_object fo;
		if (_dl_find_object(pc, &fo) == 0 && fo.dlfo_link_map)
			return fo.dlfo_link_map->l_name;
		return NULL;
	}
	return dladdr(pc, &di) ? di.dli_fname : NULL;
}

static int cuda_frame(void *pc)
{
	return cg_cuda_module(module_of(pc));
}

void cg_site_warm(void)
{
	void *pcs[2];
	if (cg_cfg.backtrace > 0) {
		(void)backtrace(pcs, 2); /* the fallback's one-time dlopen of libgcc_s */
		cg_unwind_prefault();
	}
	/* One site of this stack, interned like any other (the site table's
	 * first allocations, the unwinder's rules for the CUDA libraries'
	 * frames, the Python reader): a site no record names is never
	 * written. */
	(void)cg_site_here(0);
}

/* The kept native frames of a walk: the first outside the shim and the
 * CUDA runtime/driver (runtime hooks put both on the stack), then up to
 * depth more. pcs[0] is the return into the function that walked. */
static void site_pick(struct site_key *k, void *const *pcs, int n, uint64_t cuda, int skip, int depth)
{
	int i = skip + 1;
	while (i < n - 1 && (cuda >> i & 1))
		i++;
	for (k->n = 0; i < n && k->n < depth; i++)
		k->pc[k->n++] = pcs[i];
}

/* Hash only what is used (the fixed-size key was ~0.5 KiB). */
static size_t site_kb(const struct site_key *k, unsigned char *kb)
{
	size_t klen = k->n * sizeof k->pc[0], pl = strlen(k->py);
	memcpy(kb, k->pc, klen);
	memcpy(kb + klen, k->py, pl);
	return klen + pl;
}

/* A new id for e, under site_lock; 0 when the table cannot grow. */
static uint32_t site_id_locked(struct site_ent *e)
{
	if (site_n + 1 >= site_cap) {
		uint32_t nc = site_cap ? site_cap * 2 : 256;
		struct site_ent **nb = realloc(site_by_id, nc * sizeof *nb);
		if (!nb)
			return 0;
		site_by_id = nb;
		site_cap = nc;
	}
	e->id = ++site_n;
	site_by_id[e->id] = e;
	return e->id;
}

/* e (with its key) into the lookup table, under site_lock. 0 on failure. */
static int site_add_locked(struct site_ent *e, const unsigned char *kb, size_t klen)
{
	e->kb = malloc(klen + 1);
	if (!e->kb)
		return 0;
	memcpy(e->kb, kb, klen);
	e->klen = klen;
	HASH_ADD_KEYPTR(hh, site_tab, e->kb, e->klen, e);
	if (cg_table_add_failed(&site_table)) {
		free(e->kb);
		e->kb = NULL;
		return 0;
	}
	return 1;
}

static uint32_t site_intern(const struct site_key *k)
{
	unsigned char kb[sizeof k->pc + CG_PY_MAX];
	size_t klen = site_kb(k, kb);
	struct site_ent *e;
	uint32_t id;
	pthread_mutex_lock(&site_lock);
	HASH_FIND(hh, site_tab, kb, klen, e);
	if (e) {
		id = e->id;
		pthread_mutex_unlock(&site_lock);
		return id;
	}
	e = calloc(1, sizeof *e);
	if (!e || !site_id_locked(e)) {
		free(e);
		pthread_mutex_unlock(&site_lock);
		return 0;
	}
	e->key = *k;
	if (!site_add_locked(e, kb, klen)) {
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

/* The walk's frames the cached unwinder cannot give: glibc's backtrace,
 * and the CUDA frames found by module. */
static int site_backtrace(void **pcs, int want, uint64_t *cuda)
{
	int n = backtrace(pcs, want);
	*cuda = 0;
	for (int f = 0; f < n && f < 64; f++)
		*cuda |= (uint64_t)cuda_frame(pcs[f]) << f;
	return n;
}

/* Ask for the frames kept, the shim's, and a few of the CUDA libraries
 * above them. The cached unwinder answers in tens of nanoseconds a frame;
 * the generic one (~0.5 us a frame) only where the cached one declines. */
static int site_want(int skip, int depth)
{
	return depth + skip + 4 < CG_BT_MAX + 8 ? depth + skip + 4 : CG_BT_MAX + 8;
}

/* Both entry points: inlined into each, so that the walk starts in the
 * entry point's frame (skip counts from it). defer: stop at a cold frame
 * (cg_site_here_deferred). */
static inline __attribute__((always_inline)) uint32_t site_make(int skip, int defer)
{
	struct site_key k;
	struct site_pend *p;
	struct site_ent *e;
	struct cg_unwind_rest *rest = NULL;
	void *pcs[CG_BT_MAX + 8];
	int n = 0, depth = (int)cg_cfg.backtrace, want = site_want(skip, depth);
	uint64_t cuda = 0;
	uint32_t id;

	if (depth <= 0 && cg_cfg.python_frames <= 0)
		return 0;
	k.n = 0;
	k.py[0] = 0;
	if (depth > 0) {
		n = defer ? cg_unwind_warm(pcs, want, &cuda, &rest) : cg_unwind(pcs, want, &cuda);
		if (n < 0)
			n = site_backtrace(pcs, want, &cuda);
		if (!rest)
			site_pick(&k, pcs, n, cuda, skip, depth);
	}
	py_frames(k.py, sizeof k.py, (int)cg_cfg.python_frames);
	if (!rest)
		return site_intern(&k);
	/* A cold frame: the rest of the walk waits (site_settle_locked). */
	p = malloc(sizeof *p);
	e = p ? calloc(1, sizeof *e) : NULL;
	if (!e) {
		free(p);
		free(rest);
		return 0;
	}
	memcpy(p->pcs, pcs, (size_t)n * sizeof pcs[0]);
	p->rest = rest;
	p->n = n;
	p->want = want;
	p->skip = skip;
	p->cuda = cuda;
	memcpy(e->key.py, k.py, sizeof k.py);
	e->pend = p;
	pthread_mutex_lock(&site_lock);
	id = site_id_locked(e);
	pthread_mutex_unlock(&site_lock);
	if (!id) {
		free(rest);
		free(p);
		free(e);
		return 0;
	}
	atomic_fetch_add_explicit(&sites_deferred, 1, memory_order_relaxed);
	return id;
}

uint32_t cg_site_here(int skip)
{
	return site_make(skip, 0);
}

uint32_t cg_site_here_deferred(int skip)
{
	return site_make(skip, 1);
}

/* Finish a deferred site's walk (the cold rules worked out now, from the
 * stack's copy) and intern it; a site already interned meanwhile becomes
 * what this id stands for (alias). Under site_lock. */
static void site_settle_locked(struct site_ent *e)
{
	struct site_pend *p = e->pend;
	struct site_ent *f;
	unsigned char kb[sizeof e->key.pc + CG_PY_MAX];
	size_t klen;
	int n;
	e->pend = NULL;
	n = cg_unwind_finish(p->rest, p->pcs, p->n, p->want, &p->cuda);
	site_pick(&e->key, p->pcs, n, p->cuda, p->skip, (int)cg_cfg.backtrace);
	klen = site_kb(&e->key, kb);
	HASH_FIND(hh, site_tab, kb, klen, f);
	if (f)
		e->alias = f->id;
	else
		(void)site_add_locked(e, kb, klen); /* not in the table: still its own id */
	free(p->rest);
	free(p);
}

/* The entry under id site as it stands (pending or not), or NULL. */
static struct site_ent *site_by_id_locked(uint32_t site)
{
	return site && site <= site_n ? site_by_id[site] : NULL;
}

/* The entry of site id, settled, through its alias; NULL if none. */
static struct site_ent *site_ent_locked(uint32_t site)
{
	struct site_ent *e = site_by_id_locked(site);
	if (e && e->pend)
		site_settle_locked(e);
	if (e && e->alias)
		e = site_by_id[e->alias];
	return e;
}

int cg_site_pending(uint32_t site)
{
	struct site_ent *e;
	int pending;
	pthread_mutex_lock(&site_lock);
	e = site_by_id_locked(site);
	pending = e && e->pend;
	pthread_mutex_unlock(&site_lock);
	return pending;
}

void cg_site_settle(uint32_t site)
{
	pthread_mutex_lock(&site_lock);
	(void)site_ent_locked(site);
	pthread_mutex_unlock(&site_lock);
}

static void frame_text(void *pc, char *out, unsigned cap)
{
	Dl_info di;
	if (dladdr(pc, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		base = base ? base + 1 : di.dli_fname;
		cg_module_note(di.dli_fbase, base);
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
	struct site_ent *e;
	pthread_mutex_lock(&site_lock);
	e = site_ent_locked(site);
	if (e) {
		*k = e->key;
		ok = 1;
	}
	pthread_mutex_unlock(&site_lock);
	return ok;
}

/* Render a site's native frames once and keep the text with the site:
 * symbolisation (dladdr) is slow in large libraries, sites repeat. */
static char *site_text_locked(struct site_ent *e)
{
	char buf[300];
	size_t cap = 64, n = 0;
	char *t;
	if (e->text)
		return e->text;
	t = malloc(cap);
	if (!t)
		return NULL;
	t[0] = 0;
	for (int i = 0; i < e->key.n; i++) {
		size_t l;
		frame_text(e->key.pc[i], buf, sizeof buf);
		l = strlen(buf);
		if (n + l + 2 > cap) {
			char *nt = realloc(t, cap = (n + l + 2) * 2);
			if (!nt)
				break;
			t = nt;
		}
		memcpy(t + n, buf, l);
		n += l;
		t[n++] = '\n';
		t[n] = 0;
	}
	e->text = t;
	return t;
}

/* The site as the body of a JSON array (or a text list), built once per
 * format: a site is written on every lifecycle record that names it. */
static const char *site_frag_locked(struct site_ent *e, int json, size_t *len)
{
	struct cg_rec *t;
	char py[CG_PY_MAX];
	const char *nat;
	char *frag;
	if (e->frag[json]) {
		*len = e->frag_len[json];
		return e->frag[json];
	}
	t = malloc(sizeof *t);
	if (!t)
		return NULL;
	t->on = 1;
	t->json = json;
	t->level = CG_L_INFO;
	t->n = 0;
	t->trunc = 0;
	t->nfields = 0;
	memcpy(py, e->key.py, sizeof py);
	if (py[0]) {
		char *save = NULL, *tok;
		for (tok = strtok_r(py, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
			rec_elem_str(t, tok);
	}
	nat = site_text_locked(e);
	for (const char *line = nat ? nat : ""; *line;) {
		const char *nl = strchr(line, '\n');
		char fr[300];
		size_t l;
		if (!nl)
			break;
		l = (size_t)(nl - line) < sizeof fr - 1 ? (size_t)(nl - line) : sizeof fr - 1;
		memcpy(fr, line, l);
		fr[l] = 0;
		rec_elem_str(t, fr);
		line = nl + 1;
	}
	frag = t->trunc ? NULL : malloc(t->n + 1);
	if (frag) {
		memcpy(frag, t->buf, t->n);
		frag[t->n] = 0;
		e->frag[json] = frag;
		e->frag_len[json] = t->n;
		*len = t->n;
	}
	free(t);
	return frag;
}

void rec_site(struct cg_rec *r, const char *key, uint32_t site)
{
	struct site_ent *e;
	const char *frag = NULL;
	size_t len = 0;
	if (!r->on || !site)
		return;
	pthread_mutex_lock(&site_lock);
	e = site_ent_locked(site);
	if (e)
		frag = site_frag_locked(e, r->json ? 1 : 0, &len);
	pthread_mutex_unlock(&site_lock);
	if (!frag)
		return;
	/* Fragments are never freed once set (sites live as long as the
	 * process), so this copy needs no lock. */
	rec_open(r, key, '[');
	rec_raw_elems(r, frag, len);
	rec_close(r, ']');
}

void cg_site_first(uint32_t site, char *out, unsigned cap)
{
	struct site_key k;
	out[0] = 0;
	if (!site_copy(site, &k))
		return;
	if (k.py[0]) {
		/* The innermost frame of the user's own code ("py:"), else the
		 * innermost frame: a sync inside print(tensor) is the script's
		 * print line, not torch/_tensor_str.py's. */
		char *f = k.py, *user = NULL;
		while (f && *f) {
			char *semi = strchr(f, ';');
			if (!strncmp(f, "py:", 3)) {
				user = f;
				if (semi)
					*semi = 0;
				break;
			}
			f = semi ? semi + 1 : NULL;
		}
		if (!user) {
			char *semi = strchr(k.py, ';');
			if (semi)
				*semi = 0;
			user = k.py;
		}
		snprintf(out, cap, "%s", user);
	} else if (k.n) {
		frame_text(k.pc[0], out, cap);
	}
}
