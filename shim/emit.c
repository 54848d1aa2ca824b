/* shim/emit.c -- the record writer's list writers (emit.h); the emit_<event>
 * functions themselves are generated (shim/gen-records.py). */
#include "emit.h"
#include "log.h"

void emit_hex_list(struct cg_rec *r, const char *key, const void *arg)
{
	const struct emit_hexes *h = arg;
	rec_open(r, key, '[');
	for (int i = 0; i < h->n; i++)
		rec_elem_hex(r, h->v[i]);
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
