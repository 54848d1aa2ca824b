/* shim/unwind-cfi.c -- the rule of a return address, from the module's
 * .eh_frame (unwind.c caches it).
 *
 * The FDE is found through _dl_find_object and the .eh_frame_hdr search
 * table; the CIE's and FDE's CFA programs run up to the return address,
 * exactly what libgcc does. Only the common shapes are followed (their
 * architecture's registers and return-address rule: unwind-int.h): CFA =
 * sp or the frame pointer plus an offset, the return address saved at a
 * CFA offset, the frame pointer saved at a CFA offset or left alone.
 * Anything else is R_HARD and the caller falls back to the generic
 * unwinder, so the result is never a guess. Also here: prefaulting the
 * search tables, and which modules are the CUDA libraries.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <errno.h>

#include "unwind-int.h"
#include "unwind.h"

static _Atomic unsigned long misses;

unsigned long cg_unwind_misses(void)
{
	return atomic_load(&misses);
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

struct row {
	int cfa_reg, cfa_expr;
	int64_t cfa_off;
	int fp_k, ra_k;
	int64_t fp_off, ra_off;
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
	if (reg == CG_DW_FP) {
		s->fp_k = kind;
		s->fp_off = off;
	} else if (reg == ra_reg) {
		s->ra_k = kind;
		s->ra_off = off;
	}
}

static void restore_reg(struct row *s, const struct row *init, uint64_t reg, uint64_t ra_reg)
{
	if (reg == CG_DW_FP) {
		s->fp_k = init->fp_k;
		s->fp_off = init->fp_off;
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
#ifdef CG_DW_CFA_NEGATE_RA_STATE
			case CG_DW_CFA_NEGATE_RA_STATE: /* return addresses are stripped as read */
				break;
#endif
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

uint64_t cg_unwind_rule(uintptr_t pc, const struct dl_find_object *fo)
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
	/* the outermost frame whatever its CFA (aarch64's _start: CFA = sp + 0) */
	if (row.ra_k == K_UNDEF)
		return R_KNOWN | R_STOP | cuda;
	if (row.cfa_expr || (row.cfa_reg != CG_DW_SP && row.cfa_reg != CG_DW_FP) || row.cfa_off <= 0 ||
	    row.cfa_off > INT32_MAX)
		return R_HARD;
	if (row.ra_k != K_OFFSET || !CG_RA_OK(row.ra_off))
		return R_HARD;
	rule = R_KNOWN | cuda | (uint32_t)(int32_t)row.cfa_off | CG_RA_RULE(row.ra_off);
	if (row.cfa_reg == CG_DW_FP)
		rule |= R_CFA_FP;
	if (row.fp_k == K_OFFSET) { /* %rbp or x29 kept in this frame (aarch64: its frame record) */
		if (row.fp_off < INT16_MIN || row.fp_off > INT16_MAX)
			return R_HARD;
		rule |= R_FP_SAVED | ((uint64_t)(uint16_t)(int16_t)row.fp_off << 48);
	} else if (row.fp_k != K_SAME) {
		return R_HARD;
	}
	return rule;
}
