/* shim/emit.c -- the record writer's list writers (emit.h); the emit_<event>
 * functions themselves are generated (shim/gen-records.py). */
#define _GNU_SOURCE /* stpcpy */
#include <string.h>

#include "emit.h"
#include "log.h"

void emit_access_list(struct cg_rec *r, const char *key, const void *arg)
{
	const struct emit_access *a = arg;
	rec_open(r, key, '[');
	for (size_t i = 0; i < a->n && i < 16; i++) {
		char t[32], *o = t;
		if (a->acc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE)
			o = rec_fmt_i64_(o, a->acc[i].location.id);
		else
			*o++ = '?';
		*o++ = ':';
		o = stpcpy(o, a->acc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "rw"
			      : a->acc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? "r"
										    : "none");
		rec_elem_str(r, t);
	}
	rec_close(r, ']');
}

void emit_hex_list(struct cg_rec *r, const char *key, const void *arg)
{
	const struct emit_hexes *h = arg;
	rec_open(r, key, '[');
	for (int i = 0; i < h->n; i++)
		rec_elem_hex(r, h->v[i]);
	rec_close(r, ']');
}

void emit_u64_list(struct cg_rec *r, const char *key, const void *arg)
{
	const struct emit_u64s *u = arg;
	rec_open(r, key, '[');
	for (int i = 0; i < u->n; i++) {
		char num[24];
		*rec_fmt_u64_(num, u->v[i]) = 0;
		rec_elem_raw(r, num);
	}
	rec_close(r, ']');
}

void emit_count_obj(struct cg_rec *r, const char *key, const void *arg)
{
	const struct emit_counts *c = arg;
	rec_open(r, key, '{');
	for (int i = 0; i < c->n; i++)
		rec_u64(r, c->k[i], c->v[i]);
	rec_close(r, '}');
}

void emit_triple(struct cg_rec *r, const char *key, const void *arg)
{
	const uint32_t *v = arg;
	rec_open(r, key, '[');
	for (int k = 0; k < 3; k++) {
		char num[24];
		*rec_fmt_u64_(num, v[k]) = 0;
		rec_elem_raw(r, num);
	}
	rec_close(r, ']');
}

void emit_str_list(struct cg_rec *r, const char *key, const void *arg)
{
	const struct emit_strs *s = arg;
	rec_open(r, key, '[');
	for (int i = 0; i < s->n; i++)
		rec_elem_str(r, s->v[i]);
	rec_close(r, ']');
}
