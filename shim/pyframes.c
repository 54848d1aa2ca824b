/*
 * shim/pyframes.c -- the calling thread's innermost Python frames, read
 * through CPython's C API looked up at run time (no libpython link): what a
 * site (site.c) adds to its native frames when the thread holds the GIL.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <sys/uio.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hot.h"
#include "locks.h"
#include "module.h"
#include "pyframes.h"
#include "resolve.h"

/* ---- Python frames, through the C API looked up at run time ------------- */

struct py_api {
	int tried, ok;
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
static _Atomic int py_done, py12_done;
static _Atomic unsigned py_absent; /* calls while neither reader is resolved */
static struct py_api py_g;

/* Python's symbols appear only with a module loaded: a lookup that found
 * none is made again only once the loader's count of loads (dl_iterate_phdr's
 * dlpi_adds) has moved since, or every 4096th turn (a module already loaded
 * made global later: dlopen with RTLD_NOLOAD | RTLD_GLOBAL). py_looked: the
 * count at the last lookup (0 none); the count itself 0 when unknown. */
static _Atomic unsigned long long py_looked;

static int loads_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1; /* the first module says it */
}

/* The loader's count of loads; 0 (unknown) in a forked child, where the
 * loader's list may not be asked (cg_module_iterate): a lookup turn then
 * looks (dlsym: every 64th, as before the count was kept). */
static unsigned long long py_loads(void)
{
	unsigned long long n = 0;
	if (cg_module_iterate(loads_one, &n) < 0)
		return 0;
	return n;
}

static void py_resolve_locked(void)
{
	/* A failing lookup allocates an error string: cg_pyframes looks
	 * again only every 64th call while no Python was found. */
	if (py_g.ok)
		return;
	py_g.tried = 1;
	if (!__atomic_load_n(&cg_real_dlsym, __ATOMIC_ACQUIRE))
		return;
	atomic_store_explicit(&py_looked, py_loads(), memory_order_relaxed);
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

/* A frame is read with one read of its header and one of its code
 * object's header (process_vm_readv until the layout is trusted). What a
 * walk writes for a frame ("kind:file:line:func") is kept, keyed by the
 * code object, the frame's last instruction and the code object's file
 * name object: a (code object, instruction) pair always maps to the same
 * line, and a code object freed and another allocated at its address is
 * told apart by its strings. A repeated site's Python part is then a copy
 * per frame (~4 us for 8 frames of PyTorch's capture_begin on the H100
 * host when each frame was formatted again: docs/design.md). On a miss the
 * names come from a cache by code object (decoded once), the line from
 * CPython (_PyCode_CheckLineNumber walks the line table from the start: a
 * few microseconds for a long function). One lock per walk, only tried: a
 * thread that finds it busy, or a child forked while another thread held
 * it, formats every frame without the caches. */
#define PY12_FRAME_HDR 72 /* up to and including owner (70) */
#define PY12_CODE_HDR 128 /* up to and including co_name (120) */
#define PY12_CACHE 128
#define PY12_TEXTS 256

struct py12_name {
	void *code, *fn, *name;
	char file[160];
	char func[96];
};
struct py12_text {
	void *code, *instr, *fn;
	unsigned len;
	char text[232];
};
static struct py12_name py12_cache[PY12_CACHE];
static struct py12_text py12_texts[PY12_TEXTS];

static unsigned py12_slot(void *code)
{
	uintptr_t v = (uintptr_t)code >> 4;
	return (unsigned)((v ^ (v >> 7) ^ (v >> 17)) % PY12_CACHE);
}

/* File and function of a code object whose header is hdr: from the cache
 * (locked: the caller holds py12_lock), else decoded (and cached when
 * locked). */
static void py12_names(const struct py12_api *py12, void *code, const unsigned char *hdr, int locked, char *file,
		       size_t fcap, char *func, size_t ncap)
{
	void *fn_obj, *name_obj;
	struct py12_name *e = &py12_cache[py12_slot(code)];
	memcpy(&fn_obj, hdr + PY312_CODE_FILENAME, sizeof fn_obj);
	memcpy(&name_obj, hdr + PY312_CODE_NAME, sizeof name_obj);
	if (locked && e->code == code && e->fn == fn_obj && e->name == name_obj) {
		snprintf(file, fcap, "%s", e->file);
		snprintf(func, ncap, "%s", e->func);
		return;
	}
	if (py12_ascii(py12, fn_obj, file, fcap))
		snprintf(file, fcap, "?");
	if (py12_ascii(py12, name_obj, func, ncap))
		snprintf(func, ncap, "?");
	if (locked) {
		e->code = code;
		e->fn = fn_obj;
		e->name = name_obj;
		snprintf(e->file, sizeof e->file, "%s", file);
		snprintf(e->func, sizeof e->func, "%s", func);
	}
}

/* The text of one frame into out (cap bytes): from the text cache when
 * locked and known, else formatted (and kept). Returns its length, or -1
 * when code is not a code object. */
static int py12_frame_text(const struct py12_api *py12, void *frame, void *code, const unsigned char *hdr, void *instr,
			   int locked, char *out, size_t cap)
{
	void *type, *fn;
	char file[160], func[96];
	struct py12_text *t;
	uintptr_t v;
	int w;
	memcpy(&type, hdr + PY_OB_TYPE, sizeof type);
	memcpy(&fn, hdr + PY312_CODE_FILENAME, sizeof fn);
	if (type != py12->code_type)
		return -1;
	v = ((uintptr_t)code >> 4) ^ ((uintptr_t)instr >> 1);
	t = locked && instr ? &py12_texts[(v ^ (v >> 9) ^ (v >> 19)) % PY12_TEXTS] : NULL;
	if (t && t->code == code && t->instr == instr && t->fn == fn && t->len < cap) {
		memcpy(out, t->text, t->len + 1);
		return (int)t->len;
	}
	py12_names(py12, code, hdr, locked, file, sizeof file, func, sizeof func);
	w = snprintf(out, cap, "%s:%s:%d:%s", py_kind(file), py_short(file), py12->frame_line(frame), func);
	if (w < 0)
		return -1;
	if (t && (size_t)w < cap && (size_t)w < sizeof t->text) {
		t->code = code;
		t->instr = instr;
		t->fn = fn;
		t->len = (unsigned)w;
		memcpy(t->text, out, (size_t)w + 1);
	}
	return w;
}

/* Returns 1 when the walk ran (frames may be empty), 0 when unavailable. */
static int py12_frames(const struct py_api *py, char *out, size_t cap, int max)
{
	struct py12_api py12;
	void *ts, *cframe, *frame, *code;
	unsigned char fh[PY12_FRAME_HDR], ch[PY12_CODE_HDR];
	size_t n = 0;
	int locked;
	py12_resolve(&py12);
	if (!py12.ok || !py->is_init || !py->is_init())
		return 0;
	ts = py12.this_tstate();
	if (!ts || py12_read(&cframe, (char *)ts + PY312_TSTATE_CFRAME, sizeof cframe) ||
	    py12_read(&frame, (char *)cframe + PY312_CFRAME_CURRENT, sizeof frame))
		return 1;
	locked = pthread_mutex_trylock(&py12_lock) == 0;
	for (int i = 0, guard = 0; frame && i < max && guard < 256; guard++) {
		void *prev, *instr;
		int w;
		if (py12_read(fh, frame, sizeof fh))
			break;
		memcpy(&code, fh + PY312_FRAME_CODE, sizeof code);
		memcpy(&prev, fh + PY312_FRAME_PREVIOUS, sizeof prev);
		memcpy(&instr, fh + PY312_FRAME_PREV_INSTR, sizeof instr);
		if (fh[PY312_FRAME_OWNER] != PY312_OWNED_BY_CSTACK) {
			if (cap - n < 2 || py12_read(ch, code, sizeof ch))
				break;
			if (n)
				out[n++] = ';';
			w = py12_frame_text(&py12, frame, code, ch, instr, locked, out + n, cap - n);
			if (w < 0 || (size_t)w >= cap - n) {
				out[n ? n - 1 : 0] = 0; /* no partial frame, no trailing ';' */
				break;
			}
			atomic_store_explicit(&py12_trusted, 1, memory_order_relaxed);
			n += (size_t)w;
			i++;
		}
		frame = prev;
	}
	if (locked)
		pthread_mutex_unlock(&py12_lock);
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
/* Whether no module was loaded since the last lookup (py_looked). */
static CG_COLD int py_loads_unchanged(void)
{
	unsigned long long n = py_loads();
	return n && n == atomic_load_explicit(&py_looked, memory_order_relaxed);
}

CG_HOT int cg_pyframes_none(int max)
{
	unsigned turn;
	if (max <= 0)
		return 1;
	if (atomic_load_explicit(&py_done, memory_order_acquire) ||
	    atomic_load_explicit(&py12_done, memory_order_acquire))
		return 0;
	/* No Python found yet (a C program): the lookups, a lock and two
	 * failing symbol searches, every 64th call only, not at each site
	 * (a program that starts Python later names its frames from then
	 * on, within 64 sites), and then only when a module was loaded since
	 * the last (py_looked). */
	turn = atomic_fetch_add_explicit(&py_absent, 1, memory_order_relaxed);
	if (turn % 64)
		return 1;
	return turn % 4096 && py_loads_unchanged();
}

void cg_pyframes(char *out, size_t cap, int max)
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

/* ---- a finalizing interpreter ------------------------------------------- */

/* Py_IsFinalizing (3.13+) or _Py_IsFinalizing (3.7-3.12), looked up once,
 * at the first question (never on the launch path). */
static int (*py_fin)(void);
static pthread_once_t py_fin_once = PTHREAD_ONCE_INIT;

static void py_fin_lookup(void)
{
	*(void **)&py_fin = cg_real_dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
	if (!py_fin)
		*(void **)&py_fin = cg_real_dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
}

int cg_pyframes_finalizing(void)
{
	if (!__atomic_load_n(&cg_real_dlsym, __ATOMIC_ACQUIRE))
		return 0;
	pthread_once(&py_fin_once, py_fin_lookup);
	return py_fin && py_fin();
}
