/* shim/unwind.c -- x86-64 call-site unwinding with a per-return-address rule cache.
 *
 * A frame's rule comes from the module's .eh_frame (found through
 * _dl_find_object and the .eh_frame_hdr search table) by running the CFA
 * program up to the return address, exactly what libgcc does, but only the
 * first time that return address is seen. Only the common x86-64 shapes are
 * followed: CFA = %rsp or %rbp plus an offset, return address at CFA-8,
 * %rbp saved at a CFA offset or left alone. Anything else answers -1 and the
 * caller falls back to the generic unwinder, so the result is never a guess.
 *
 * Cache: 4-way set-associative slots {pc, module, rule}. Readers take no lock (the
 * pc is read before and after the rest, seqlock style); one filler at a
 * time under a try-lock (never waits: a busy filler means this rule is just
 * not kept), so a fork or a signal mid-fill cannot deadlock anything. The
 * module identity (link map and load address) is checked on every hit, so
 * code unloaded and replaced at the same address is not read with stale
 * rules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stack.h"
#include "thread.h"
#include "unwind.h"

extern int _dl_find_object(void *pc, struct dl_find_object *result) __attribute__((weak));

/* Rule word: bits 0..31 CFA offset (int32), 48..63 %rbp save slot relative
 * to the CFA (int16), flags in between. 0 means "no rule". */
#define R_KNOWN (1ull << 32)
#define R_CFA_RBP (1ull << 33)
#define R_RBP_SAVED (1ull << 34)
#define R_CUDA (1ull << 35)
#define R_STOP (1ull << 36) /* outermost frame (no FDE, return address undefined) */
#define R_HARD (1ull << 37) /* needs the generic unwinder */

#define SLOTS 4096

struct slot {
	_Atomic uintptr_t pc;
	_Atomic uintptr_t mod;
	_Atomic uint64_t rule;
};

static struct slot cache[SLOTS];
static pthread_mutex_t fill_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long misses, memo_hits;

unsigned long cg_unwind_misses(void)
{
	return atomic_load(&misses);
}

unsigned long cg_unwind_memo_hits(void)
{
	return atomic_load(&memo_hits);
}

/* ---- DWARF reading ------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned sh = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t sleb(struct rd *r)
{
	int64_t v = 0;
	unsigned sh = 0;
	uint8_t b = 0;
	while (r->p < r->end) {
		b = *r->p++;
		if (sh < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << sh);
		sh += 7;
		if (!(b & 0x80)) {
			if (sh < 64 && (b & 0x40))
				v |= -((int64_t)1 << sh);
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

static uint64_t fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	if (r->end - r->p < (long)n) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p, n); /* little-endian */
	r->p += n;
	return v;
}

/* A pointer in DW_EH_PE encoding enc; apply = 0 reads the value format
 * only (pc_range, or to skip a field). datarel is relative to dbase. */
static uintptr_t enc_ptr(struct rd *r, uint8_t enc, int apply, uintptr_t dbase)
{
	uintptr_t at = (uintptr_t)r->p, v;
	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00:
		v = (uintptr_t)fixed(r, 8);
		break;
	case 0x01:
		v = (uintptr_t)uleb(r);
		break;
	case 0x02:
		v = (uintptr_t)fixed(r, 2);
		break;
	case 0x03:
		v = (uintptr_t)fixed(r, 4);
		break;
	case 0x04:
		v = (uintptr_t)fixed(r, 8);
		break;
	case 0x09:
		v = (uintptr_t)sleb(r);
		break;
	case 0x0a:
		v = (uintptr_t)(int64_t)(int16_t)fixed(r, 2);
		break;
	case 0x0b:
		v = (uintptr_t)(int64_t)(int32_t)fixed(r, 4);
		break;
	case 0x0c:
		v = (uintptr_t)fixed(r, 8);
		break;
	default:
		r->bad = 1;
		return 0;
	}
	if (!apply)
		return v;
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10:
		v += at;
		break;
	case 0x30:
		v += dbase;
		break;
	default:
		r->bad = 1;
		return 0;
	}
	if (enc & 0x80) /* indirect: never used for code addresses */
		r->bad = 1;
	return v;
}

/* ---- the CFA program ----------------------------------------------------- */

enum { K_SAME, K_OFFSET, K_UNDEF, K_OTHER };
#define DW_RBP 6
#define DW_RSP 7

struct row {
	int cfa_reg, cfa_expr;
	int64_t cfa_off;
	int rbp_k, ra_k;
	int64_t rbp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int z, signal;
	struct rd insns;
};

static void set_reg(struct row *s, uint64_t reg, uint64_t ra_reg, int kind, int64_t off)
{
	if (reg == DW_RBP) {
		s->rbp_k = kind;
		s->rbp_off = off;
	} else if (reg == ra_reg) {
		s->ra_k = kind;
		s->ra_off = off;
	}
}

static void restore_reg(struct row *s, const struct row *init, uint64_t reg, uint64_t ra_reg)
{
	if (reg == DW_RBP) {
		s->rbp_k = init->rbp_k;
		s->rbp_off = init->rbp_off;
	} else if (reg == ra_reg) {
		s->ra_k = init->ra_k;
		s->ra_off = init->ra_off;
	}
}

/* Run instructions while the location stays <= target. Returns 0, or -1 on
 * an instruction this reader does not know. init is the CIE's row (for
 * DW_CFA_restore); loc advances only in FDE programs (target != 0). */
static int run_cfa(struct rd *r, const struct cie *c, struct row *s, const struct row *init, uintptr_t loc,
		   uintptr_t target)
{
	struct row stack[8];
	int sp = 0;
	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;
		int adv = 0;
		switch (op & 0xc0) {
		case 0x40:
			delta = op & 0x3f;
			adv = 1;
			break;
		case 0x80:
			set_reg(s, op & 0x3f, c->ra_reg, K_OFFSET, (int64_t)uleb(r) * c->data_align);
			continue;
		case 0xc0:
			restore_reg(s, init, op & 0x3f, c->ra_reg);
			continue;
		}
		if (!adv) {
			switch (op) {
			case 0x00:
				break;
			case 0x01: {
				uintptr_t nl = enc_ptr(r, c->fde_enc, 1, 0);
				if (target && nl > target)
					return 0;
				loc = nl;
				break;
			}
			case 0x02:
				delta = fixed(r, 1);
				adv = 1;
				break;
			case 0x03:
				delta = fixed(r, 2);
				adv = 1;
				break;
			case 0x04:
				delta = fixed(r, 4);
				adv = 1;
				break;
			case 0x05:
				reg = uleb(r);
				set_reg(s, reg, c->ra_reg, K_OFFSET, (int64_t)uleb(r) * c->data_align);
				break;
			case 0x06:
				restore_reg(s, init, uleb(r), c->ra_reg);
				break;
			case 0x07:
				set_reg(s, uleb(r), c->ra_reg, K_UNDEF, 0);
				break;
			case 0x08:
				set_reg(s, uleb(r), c->ra_reg, K_SAME, 0);
				break;
			case 0x09:
				reg = uleb(r);
				(void)uleb(r);
				set_reg(s, reg, c->ra_reg, K_OTHER, 0);
				break;
			case 0x0a:
				if (sp == 8)
					return -1;
				stack[sp++] = *s;
				break;
			case 0x0b:
				if (!sp)
					return -1;
				*s = stack[--sp];
				break;
			case 0x0c:
				s->cfa_reg = (int)uleb(r);
				s->cfa_off = (int64_t)uleb(r);
				s->cfa_expr = 0;
				break;
			case 0x0d:
				s->cfa_reg = (int)uleb(r);
				s->cfa_expr = 0;
				break;
			case 0x0e:
				s->cfa_off = (int64_t)uleb(r);
				break;
			case 0x0f: {
				uint64_t len = uleb(r);
				if ((uint64_t)(r->end - r->p) < len)
					return -1;
				r->p += len;
				s->cfa_expr = 1;
				break;
			}
			case 0x10:
			case 0x16: {
				uint64_t len;
				reg = uleb(r);
				len = uleb(r);
				if ((uint64_t)(r->end - r->p) < len)
					return -1;
				r->p += len;
				set_reg(s, reg, c->ra_reg, K_OTHER, 0);
				break;
			}
			case 0x11:
				reg = uleb(r);
				set_reg(s, reg, c->ra_reg, K_OFFSET, sleb(r) * c->data_align);
				break;
			case 0x12:
				s->cfa_reg = (int)uleb(r);
				s->cfa_off = sleb(r) * c->data_align;
				s->cfa_expr = 0;
				break;
			case 0x13:
				s->cfa_off = sleb(r) * c->data_align;
				break;
			case 0x14:
				reg = uleb(r);
				(void)uleb(r);
				set_reg(s, reg, c->ra_reg, K_OTHER, 0);
				break;
			case 0x15:
				reg = uleb(r);
				(void)sleb(r);
				set_reg(s, reg, c->ra_reg, K_OTHER, 0);
				break;
			case 0x2e:
				(void)uleb(r);
				break; /* GNU_args_size */
			case 0x2f:
				reg = uleb(r);
				set_reg(s, reg, c->ra_reg, K_OFFSET, -(int64_t)uleb(r) * c->data_align);
				break;
			default:
				return -1;
			}
		}
		if (adv) {
			uintptr_t nl = loc + delta * c->code_align;
			if (target && nl > target)
				return 0;
			loc = nl;
		}
	}
	return r->bad ? -1 : 0;
}

static int parse_cie(const uint8_t *p, struct cie *c)
{
	struct rd r;
	uint32_t len;
	const char *aug;
	uint8_t ver;
	memcpy(&len, p, 4);
	if (len == 0xffffffffu || len < 8)
		return -1;
	r.p = p + 4;
	r.end = p + 4 + len;
	r.bad = 0;
	if (fixed(&r, 4) != 0) /* CIE id */
		return -1;
	ver = (uint8_t)fixed(&r, 1);
	if (ver != 1 && ver != 3)
		return -1;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	r.p++;
	if (r.p > r.end)
		return -1;
	c->code_align = uleb(&r);
	c->data_align = sleb(&r);
	c->ra_reg = ver == 1 ? fixed(&r, 1) : uleb(&r);
	c->fde_enc = 0; /* absptr */
	c->z = c->signal = 0;
	if (aug[0] == 'z') {
		uint64_t alen = uleb(&r);
		const uint8_t *aend = r.p + alen;
		c->z = 1;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			switch (*a) {
			case 'R':
				c->fde_enc = (uint8_t)fixed(&r, 1);
				break;
			case 'L':
				(void)fixed(&r, 1);
				break;
			case 'P': {
				uint8_t penc = (uint8_t)fixed(&r, 1);
				(void)enc_ptr(&r, penc & 0x0f, 0, 0);
				break;
			}
			case 'S':
				c->signal = 1;
				break;
			case 'B':
			case 'G':
				break;
			default:
				return -1;
			}
		}
		if (aend > r.end)
			return -1;
		r.p = aend;
	} else if (aug[0]) {
		return -1; /* "eh" and other old forms */
	}
	if (r.bad)
		return -1;
	c->insns = r;
	return 0;
}

/* The FDE covering pc through the module's .eh_frame_hdr binary search table. */
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t pc)
{
	struct rd r = {hdr + 4, hdr + 64, 0};
	uint64_t count;
	const int32_t *tab;
	size_t lo = 0, hi;
	if (hdr[0] != 1 || hdr[3] != 0x3b) /* table of datarel|sdata4 pairs */
		return NULL;
	(void)enc_ptr(&r, hdr[1], 1, (uintptr_t)hdr);
	count = enc_ptr(&r, hdr[2], 1, (uintptr_t)hdr);
	if (r.bad || !count)
		return NULL;
	tab = (const int32_t *)r.p;
	hi = count;
	if (pc < (uintptr_t)hdr + tab[0])
		return NULL;
	while (hi - lo > 1) { /* last entry with initial location <= pc */
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return hdr + tab[2 * lo + 1];
}

/* ---- prefaulting the search tables -------------------------------------
 * A return address seen for the first time costs a binary search of its
 * module's .eh_frame_hdr table: ~20 probes, each on another page of a table
 * that is megabytes long in libtorch_cuda.so, so ~20 page faults the first
 * time (measured: the first begin-capture in PyTorch spent ~55 us in the
 * unwinder, 6 on later ones). cg_unwind_prefault maps every loaded module's
 * table in once (MADV_POPULATE_READ, Linux 5.14; ignored where unknown),
 * from the warm-up, outside any capture. The FDEs themselves (.eh_frame,
 * the span from the lowest to the highest FDE the table points to) are
 * only asked for (MADV_WILLNEED: the kernel reads them ahead without
 * blocking): in a module not yet read from disk each new frame's FDE would
 * otherwise be a major fault in the first capture. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static int prefault_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	long page = *(long *)arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const uint8_t *hdr;
		struct rd r;
		uint64_t count;
		uintptr_t a, b;
		if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME)
			continue;
		hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		if (hdr[0] != 1 || hdr[3] != 0x3b)
			continue;
		r.p = hdr + 4, r.end = hdr + 64, r.bad = 0;
		(void)enc_ptr(&r, hdr[1], 1, (uintptr_t)hdr);
		count = enc_ptr(&r, hdr[2], 1, (uintptr_t)hdr);
		if (r.bad || count < 1024) /* a small table: a fault or two */
			continue;
		a = (uintptr_t)r.p & ~(uintptr_t)(page - 1);
		b = ((uintptr_t)r.p + count * 8 + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
		if (madvise((void *)a, b - a, MADV_POPULATE_READ) != 0)
			continue; /* not read in: the scan below would fault page by page */
		{
			const int32_t *tab = (const int32_t *)r.p;
			int32_t lo = tab[1], hi = tab[1];
			for (uint64_t k = 1; k < count; k++) {
				int32_t f = tab[2 * k + 1];
				lo = f < lo ? f : lo;
				hi = f > hi ? f : hi;
			}
			a = ((uintptr_t)hdr + lo) & ~(uintptr_t)(page - 1);
			b = ((uintptr_t)hdr + hi + 64 + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
			if (b > a)
				(void)madvise((void *)a, b - a, MADV_WILLNEED);
		}
	}
	return 0;
}

void cg_unwind_prefault(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int saved = errno;
	if (page > 0)
		dl_iterate_phdr(prefault_one, &page);
	errno = saved;
}

int cg_cuda_module(const char *path)
{
	const char *base;
	if (!path)
		return 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "libcgshim", 9) || !strncmp(base, "libcudart", 9) || !strncmp(base, "libcuda.", 8);
}

/* Work out the rule for the instruction at pc (a return address minus one). */
static uint64_t compute(uintptr_t pc, const struct dl_find_object *fo)
{
	const uint8_t *fde, *ciep;
	struct cie c;
	struct row init, row;
	struct rd r;
	uint32_t len;
	int32_t cie_off;
	uintptr_t begin, range;
	uint64_t rule, cuda = cg_cuda_module(fo->dlfo_link_map ? fo->dlfo_link_map->l_name : NULL) ? R_CUDA : 0;

	atomic_fetch_add_explicit(&misses, 1, memory_order_relaxed);
	if (!fo->dlfo_eh_frame) /* no .eh_frame_hdr: libgcc searches further */
		return R_HARD;
	fde = find_fde(fo->dlfo_eh_frame, pc);
	if (!fde)
		return R_HARD;
	memcpy(&len, fde, 4);
	if (len == 0xffffffffu || len < 8)
		return R_HARD;
	memcpy(&cie_off, fde + 4, 4);
	if (cie_off <= 0)
		return R_HARD;
	ciep = fde + 4 - cie_off;
	if (parse_cie(ciep, &c) || c.signal)
		return R_HARD;
	r.p = fde + 8;
	r.end = fde + 4 + len;
	r.bad = 0;
	begin = enc_ptr(&r, c.fde_enc, 1, 0);
	range = enc_ptr(&r, c.fde_enc & 0x0f, 0, 0);
	if (r.bad)
		return R_HARD;
	if (pc < begin || pc - begin >= range) /* a gap in the table: no unwind info */
		return R_KNOWN | R_STOP | cuda;
	if (c.z) {
		uint64_t alen = uleb(&r);
		if (r.bad || (uint64_t)(r.end - r.p) < alen)
			return R_HARD;
		r.p += alen;
	}
	memset(&init, 0, sizeof init);
	init.cfa_reg = -1;
	if (run_cfa(&c.insns, &c, &init, &init, 0, 0))
		return R_HARD;
	row = init;
	if (run_cfa(&r, &c, &row, &init, begin, pc))
		return R_HARD;
	if (row.cfa_expr || (row.cfa_reg != DW_RSP && row.cfa_reg != DW_RBP) || row.cfa_off <= 0 ||
	    row.cfa_off > INT32_MAX)
		return R_HARD;
	if (row.ra_k == K_UNDEF)
		return R_KNOWN | R_STOP | cuda;
	if (row.ra_k != K_OFFSET || row.ra_off != -8)
		return R_HARD;
	rule = R_KNOWN | cuda | (uint32_t)(int32_t)row.cfa_off;
	if (row.cfa_reg == DW_RBP)
		rule |= R_CFA_RBP;
	if (row.rbp_k == K_OFFSET) {
		if (row.rbp_off < INT16_MIN || row.rbp_off > INT16_MAX)
			return R_HARD;
		rule |= R_RBP_SAVED | ((uint64_t)(uint16_t)(int16_t)row.rbp_off << 48);
	} else if (row.rbp_k != K_SAME) {
		return R_HARD;
	}
	return rule;
}

/* The cache is 4-way set associative: a direct-mapped one let two return
 * addresses used in turn evict each other (PyTorch's capture loop: the
 * begin's walk found a cold frame every other capture, issue 19). */
#define WAYS 4
#define SETS (SLOTS / WAYS)
static _Atomic unsigned char victim[SETS]; /* next way to replace, round robin */

static unsigned set_of(uintptr_t pc)
{
	uint64_t x = (uint64_t)pc * 0x9E3779B97F4A7C15ull;
	return (unsigned)(x >> 40) & (SETS - 1);
}

/* A module's identity in a slot: its link map and load address. */
static uintptr_t mod_of(const struct dl_find_object *fo)
{
	return (uintptr_t)fo->dlfo_link_map ^ (uintptr_t)fo->dlfo_map_start;
}

/* The cached rule for pc, or 0. */
static uint64_t rule_cached(uintptr_t pc, const struct dl_find_object *fo)
{
	uintptr_t mod = mod_of(fo);
	struct slot *set = &cache[set_of(pc) * WAYS];
	for (int w = 0; w < WAYS; w++) {
		struct slot *s = &set[w];
		if (atomic_load_explicit(&s->pc, memory_order_acquire) == pc) {
			uintptr_t m = atomic_load_explicit(&s->mod, memory_order_relaxed);
			uint64_t rule = atomic_load_explicit(&s->rule, memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&s->pc, memory_order_relaxed) == pc && m == mod && rule)
				return rule;
		}
	}
	return 0;
}

static uint64_t rule_for(uintptr_t pc, const struct dl_find_object *fo)
{
	uint64_t rule = rule_cached(pc, fo);
	uintptr_t mod = mod_of(fo);
	unsigned set = set_of(pc);
	if (rule)
		return rule;
	rule = compute(pc, fo);
	if (pthread_mutex_trylock(&fill_lock) == 0) {
		/* an empty way, else the set's next victim */
		struct slot *s = NULL;
		for (int w = 0; w < WAYS && !s; w++)
			if (!atomic_load_explicit(&cache[set * WAYS + w].pc, memory_order_relaxed))
				s = &cache[set * WAYS + w];
		if (!s)
			s = &cache[set * WAYS +
				   (atomic_fetch_add_explicit(&victim[set], 1, memory_order_relaxed) % WAYS)];
		atomic_store_explicit(&s->pc, 0, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		atomic_store_explicit(&s->mod, mod, memory_order_relaxed);
		atomic_store_explicit(&s->rule, rule, memory_order_relaxed);
		atomic_store_explicit(&s->pc, pc, memory_order_release);
		pthread_mutex_unlock(&fill_lock);
	}
	return rule;
}

/* ---- the walk ------------------------------------------------------------ */

/* A walk's registers, and where it reads the stack: [base, base + len) of
 * the live stack (the thread's known stack), or of a copy (copy != NULL:
 * cg_unwind_finish, or a stack outside the thread's known one). */
struct walk {
	uintptr_t sp, bp, pc;
	const unsigned char *copy;
	uintptr_t base;
	size_t len;
	struct memo *rec; /* a live walk's stack reads are kept here (memo below) */
};

/* The walk memo. A live walk is a function of its start (sp, bp, pc) and
 * of the stack words it reads (return addresses, saved %rbp): the rules
 * depend on the return addresses only. Each thread keeps its last
 * MEMO_WAYS complete walks with the words they read; a walk from the same
 * start that finds every one of those words unchanged is the same walk,
 * and its frames are copied without a module lookup or a rule (a capture
 * loop's begin, allocation and instantiation sites: ~1,500 instructions a
 * site on the stand-in, and cache misses on the GPU host, where the
 * driver's work between two hooks evicts the rule cache). The words read
 * lie between the start's sp and the stack's top, mapped while the
 * thread lives. Per thread, malloc'd at the first walk and freed at the
 * thread's exit. */
#define MEMO_WAYS 4
#define MEMO_WORDS 128
struct memo {
	uintptr_t sp, bp, pc;
	int max, n, nw;
	int bp_used; /* a CFA came from the start's %rbp (else any %rbp will do) */
	/* Recording: where %rbp came from (-1: the start, else the read at
	 * that index), and which reads the walk depends on (every return
	 * address; a saved %rbp only when a CFA comes from it: a register
	 * the code uses for data is saved with other values every call). */
	int bp_src;
	unsigned char need[MEMO_WORDS];
	uint64_t mask;
	uintptr_t addr[MEMO_WORDS], val[MEMO_WORDS];
	void *pcs[64];
};
struct memos {
	uintptr_t lo, hi; /* the thread's known stack (cg_stack_bounds); hi 0: not known yet */
	unsigned next;
	struct memo way[MEMO_WAYS];
	struct memo rec; /* the walk being recorded */
};

/* A stack word at a, from [base, base + len): the thread's own stack (a
 * live walk, mapped while the thread lives) or the copy. An address
 * outside ends the walk: a fiber's stack without a terminating frame is
 * never read past its top (issue 30). */
static int stack_word(struct walk *w, uintptr_t a, uintptr_t *v)
{
	if (a < w->base || a - w->base + sizeof *v > w->len)
		return -1;
	if (w->copy) {
		memcpy(v, w->copy + (a - w->base), sizeof *v);
		return 0;
	}
	*v = *(const uintptr_t *)a;
	if (w->rec) {
		if (w->rec->nw < MEMO_WORDS) {
			w->rec->addr[w->rec->nw] = a;
			w->rec->val[w->rec->nw] = *v;
			w->rec->need[w->rec->nw] = 1;
		}
		w->rec->nw++; /* past MEMO_WORDS: not kept */
	}
	return 0;
}

#define WALK_HARD (-1) /* a frame this unwinder does not follow */
#define WALK_COLD (-2) /* stopped at a frame whose rule is not cached (cold == 0) */
#define WALK_OFF (-3)  /* the start lies outside the thread's known stack (walk_live) */

/* Frames from w on into pcs[*np..max), *np updated; *mask gets bit i for
 * a CUDA frame. cold: work out rules not cached; else stop before the
 * first such frame, w then holding its registers. Returns 0 or WALK_*. */
static int walk(struct walk *w, void **pcs, int *np, int max, uint64_t *mask, int cold)
{
	int n = *np, st = 0;
	while (n < max && w->pc > 4096) {
		struct dl_find_object fo;
		uint64_t rule;
		uintptr_t cfa, next, sp = w->sp, bp = w->bp, pc = w->pc;
		if (_dl_find_object((void *)(pc - 1), &fo) != 0) {
			pcs[n++] = (void *)pc; /* not in any module (JIT code): the last frame, as libgcc has it */
			break;
		}
		rule = cold ? rule_for(pc - 1, &fo) : rule_cached(pc - 1, &fo);
		if (!rule || (rule & R_HARD)) {
			st = rule ? WALK_HARD : WALK_COLD;
			break;
		}
		pcs[n] = (void *)pc;
		if (rule & R_CUDA)
			*mask |= 1ull << n;
		n++;
		if (rule & R_STOP)
			break;
		if ((rule & R_CFA_RBP) && w->rec) { /* the memo must match where %rbp came from */
			if (w->rec->bp_src < 0)
				w->rec->bp_used = 1;
			else
				w->rec->need[w->rec->bp_src] = 1;
		}
		cfa = ((rule & R_CFA_RBP) ? bp : sp) + (uintptr_t)(int64_t)(int32_t)(uint32_t)rule;
		/* Frames only go up the stack, by sane amounts. */
		if (cfa <= sp || cfa - sp > (64u << 20) || (cfa & 7) || stack_word(w, cfa - 8, &next))
			break;
		if ((rule & R_RBP_SAVED) && stack_word(w, cfa + (intptr_t)(int16_t)(uint16_t)(rule >> 48), &w->bp))
			break;
		if ((rule & R_RBP_SAVED) && w->rec && w->rec->nw <= MEMO_WORDS) {
			w->rec->bp_src = w->rec->nw - 1;
			w->rec->need[w->rec->bp_src] = 0;
		}
		w->sp = cfa;
		w->pc = next;
	}
	*np = n;
	return st;
}

static struct cg_thread_kind memo_kind;
static __thread __attribute__((tls_model("initial-exec"))) void *memos;

static struct memos *memos_get(void)
{
	return __builtin_expect(memos != NULL, 1) ? memos : cg_thread_block(&memo_kind, &memos, sizeof(struct memos));
}

/* A walk from w's start that the memo answers: frames into pcs, *np and
 * *mask set. Else 0, and (with memos) w->rec set to record this walk. */
static int memo_answer(struct memos *ms, struct walk *w, void **pcs, int *np, int max, uint64_t *mask)
{
	if (!ms)
		return 0;
	for (int k = 0; k < MEMO_WAYS; k++) {
		const struct memo *m = &ms->way[k];
		int i;
		if (m->pc != w->pc || m->sp != w->sp || (m->bp_used && m->bp != w->bp) || m->max != max || !m->n)
			continue;
		for (i = 0; i < m->nw && *(const uintptr_t *)m->addr[i] == m->val[i]; i++)
			;
		if (i < m->nw)
			continue;
		memcpy(pcs, m->pcs, (size_t)m->n * sizeof *pcs);
		*np = m->n;
		*mask = m->mask;
		atomic_fetch_add_explicit(&memo_hits, 1, memory_order_relaxed);
		return 1;
	}
	ms->rec.sp = w->sp, ms->rec.bp = w->bp, ms->rec.pc = w->pc;
	ms->rec.nw = ms->rec.bp_used = 0;
	ms->rec.bp_src = -1;
	w->rec = &ms->rec;
	return 0;
}

/* A walk recorded from its start to the end (st 0) is kept. */
static void memo_keep(struct memos *ms, struct walk *w, void **pcs, int n, int max, uint64_t mask)
{
	struct memo *m;
	if (!w->rec || w->rec->nw > MEMO_WORDS || n <= 0 || n > 64)
		return;
	m = &ms->way[ms->next++ % MEMO_WAYS];
	m->n = 0; /* a signal handler's walk in between sees no half-written way */
	m->nw = 0;
	for (int i = 0; i < ms->rec.nw; i++)
		if (ms->rec.need[i]) {
			m->addr[m->nw] = ms->rec.addr[i];
			m->val[m->nw++] = ms->rec.val[i];
		}
	memcpy(m->pcs, pcs, (size_t)n * sizeof *pcs);
	m->sp = ms->rec.sp, m->bp = ms->rec.bp, m->pc = ms->rec.pc;
	m->bp_used = ms->rec.bp_used;
	m->max = max;
	m->mask = mask;
	m->n = n;
}

/* Where a live walk from w's start may read. Inside the thread's known
 * stack, the live words from there to the stack's top (returns 1; the
 * bounds are kept in the thread's memo block: two compares). Else (a fiber, a coroutine, a signal stack, bounds
 * unknown) returns 0: the walk reads a copy made through cg_stack_copy,
 * which cannot fault, and a frame it does not follow ends it there (the
 * generic unwinder would read the live stack without bounds). */
static __attribute__((noinline)) int walk_bounded_learn(struct memos *ms, struct walk *w)
{
	uintptr_t lo, hi;
	if (!cg_stack_bounds(&lo, &hi))
		return 0;
	if (ms)
		ms->lo = lo, ms->hi = hi;
	if (w->sp < lo || w->sp >= hi)
		return 0;
	w->base = lo;
	w->len = hi - lo;
	return 1;
}

static inline __attribute__((always_inline)) int walk_bounded(struct memos *ms, struct walk *w)
{
	if (__builtin_expect(!ms || !ms->hi, 0))
		return walk_bounded_learn(ms, w);
	if (w->sp < ms->lo || w->sp >= ms->hi)
		return 0;
	w->base = ms->lo;
	w->len = ms->hi - ms->lo;
	return 1;
}

/* walk() of the live stack, through the memo, or WALK_OFF. A memo answers
 * before the bounds are looked at: it was recorded by a bounded walk of
 * this thread from the same sp, so its words lie in the same stack. */
static int walk_live(struct memos *ms, struct walk *w, void **pcs, int *np, int max, uint64_t *mask, int cold)
{
	int st;
	if (memo_answer(ms, w, pcs, np, max, mask))
		return 0;
	if (!walk_bounded(ms, w)) {
		w->rec = NULL;
		return WALK_OFF;
	}
	st = walk(w, pcs, np, max, mask, cold);
	if (!st)
		memo_keep(ms, w, pcs, *np, max, *mask);
	w->rec = NULL;
	return st;
}

/* One copy buffer kept ready, its pages touched (cg_unwind_spare_fill, from
 * the warm-up): the first deferred walk of the process takes it instead of
 * a malloc of 16 KiB whose pages fault in the begin hook. */
static _Atomic(struct cg_unwind_rest *) spare;

void cg_unwind_spare_fill(void)
{
	struct cg_unwind_rest *r;
	if (atomic_load_explicit(&spare, memory_order_relaxed))
		return;
	r = malloc(sizeof *r);
	if (!r)
		return;
	memset(r, 0, sizeof *r);
	r = atomic_exchange(&spare, r);
	free(r);
}

void cg_unwind_rest_free(struct cg_unwind_rest *r)
{
	struct cg_unwind_rest *none = NULL;
	if (r && !atomic_compare_exchange_strong(&spare, &none, r))
		free(r);
}

/* The spare, else a new copy buffer (NULL without memory); errno kept. */
static struct cg_unwind_rest *rest_get(void)
{
	struct cg_unwind_rest *r = atomic_exchange(&spare, NULL);
	int saved = errno;
	if (!r)
		r = malloc(sizeof *r);
	errno = saved;
	return r;
}

/* Copy the stack from w's sp up (cg_stack_copy: never past the thread's
 * stack top or the last mapped page) into r, and point w at the copy. */
static void walk_copy(struct walk *w, struct cg_unwind_rest *r)
{
	int saved = errno;
	r->base = w->sp;
	r->len = cg_stack_copy(r->stack, w->sp, sizeof r->stack);
	errno = saved;
	w->copy = r->stack;
	w->base = r->base;
	w->len = r->len;
}

/* cg_unwind and cg_unwind_warm on a stack outside the thread's known one:
 * the walk over a copy. *rest (warm only: rest != NULL) keeps the copy at
 * a cold frame. Returns the count. */
static __attribute__((noinline, cold)) int walk_off_stack(struct walk *w, void **pcs, int max, uint64_t *mask,
							  struct cg_unwind_rest **rest)
{
	struct cg_unwind_rest *r = rest_get();
	int n = 0, st;
	if (!r)
		return 0; /* no frames rather than an unbounded read */
	walk_copy(w, r);
	st = walk(w, pcs, &n, max, mask, !rest);
	if (st == WALK_COLD && rest) {
		r->pc = w->pc;
		r->sp = w->sp;
		r->bp = w->bp;
		*rest = r;
		return n;
	}
	cg_unwind_rest_free(r);
	return n;
}

__attribute__((noinline)) int cg_unwind(void **pcs, int max, uint64_t *cuda)
{
	/* This function keeps a frame pointer (__builtin_frame_address(0)
	 * makes GCC and Clang set one up): its caller's state is exact. */
	uintptr_t *fp = __builtin_frame_address(0);
	struct walk w = {(uintptr_t)(fp + 2), fp[0], fp[1], NULL, 0, 0, NULL};
	uint64_t mask = 0;
	int n = 0, st;
	if (!_dl_find_object || max > 64)
		return -1;
	st = walk_live(memos_get(), &w, pcs, &n, max, &mask, 1);
	if (st == WALK_OFF)
		n = walk_off_stack(&w, pcs, max, &mask, NULL);
	else if (st)
		return -1;
	if (cuda)
		*cuda = mask;
	return n;
}

__attribute__((noinline)) int cg_unwind_warm(void **pcs, int max, uint64_t *cuda, struct cg_unwind_rest **rest)
{
	uintptr_t *fp = __builtin_frame_address(0);
	struct walk w = {(uintptr_t)(fp + 2), fp[0], fp[1], NULL, 0, 0, NULL};
	uint64_t mask = 0;
	int n = 0, st;
	*rest = NULL;
	if (!_dl_find_object || max > 64)
		return -1;
	st = walk_live(memos_get(), &w, pcs, &n, max, &mask, 0);
	if (st == WALK_OFF) {
		n = walk_off_stack(&w, pcs, max, &mask, rest);
	} else {
		if (st == WALK_HARD)
			return -1;
		if (st == WALK_COLD) {
			struct cg_unwind_rest *r = rest_get();
			if (!r)
				return -1;
			r->pc = w.pc;
			r->sp = w.sp;
			r->bp = w.bp;
			walk_copy(&w, r);
			*rest = r;
		}
	}
	if (cuda)
		*cuda = mask;
	return n;
}

int cg_unwind_finish(struct cg_unwind_rest *r, void **pcs, int n, int max, uint64_t *cuda)
{
	struct walk w = {r->sp, r->bp, r->pc, r->stack, r->base, r->len, NULL};
	uint64_t mask = cuda ? *cuda : 0;
	if (!_dl_find_object || max > 64 || n >= max)
		return n;
	/* A frame the fast rules do not follow ends the site there: there is
	 * no generic unwinder for a copy. */
	(void)walk(&w, pcs, &n, max, &mask, 1);
	if (cuda)
		*cuda = mask;
	return n;
}
