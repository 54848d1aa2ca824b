/*
 * shim/emit.h -- the record writer: emit_<event>(level, facts), one per
 * event of include/cgshim/records.def, generated (shim/gen-records.py,
 * emit-gen.h) with its facts struct ev_<event>. The only code in the shim
 * that starts a record: a hook's last step hands the facts the model and
 * the policy returned to emit_*; the writer reads nothing else (never the
 * model). A field's name, type and order are the schema's; the facts carry
 * only values (has_<field> beside an optional number or bool).
 *
 * A list or object field is a struct emit_part: a writer of its value
 * (fn(r, key, arg): rec_open(r, key, ...) .. rec_close), such as the two
 * below for the common lists.
 */
#ifndef CGSHIM_EMIT_H
#define CGSHIM_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "cuda-abi.h"
#include "emit-gen.h"

/* An array of handles or addresses ("0x..."): arg is a struct emit_hexes. */
struct emit_hexes {
	const unsigned long long *v;
	int n;
};
void emit_hex_list(struct cg_rec *r, const char *key, const void *arg);
/* An array of strings: arg is a struct emit_strs. */
struct emit_strs {
	const char *const *v;
	int n;
};
void emit_str_list(struct cg_rec *r, const char *key, const void *arg);

/* The peer access of a memory node's accessDescs: "D:rw", "D:r" or
 * "D:none" per descriptor (a location that is not a device: "?"); at most
 * 16. arg is a struct emit_access. */
struct emit_access {
	const CUmemAccessDesc *acc;
	size_t n;
};
void emit_access_list(struct cg_rec *r, const char *key, const void *arg);

/* An array of numbers: arg is a struct emit_u64s. */
struct emit_u64s {
	const unsigned long long *v;
	int n;
};
void emit_u64_list(struct cg_rec *r, const char *key, const void *arg);

/* An object of counts, {"k0": v0, ...}: arg is a struct emit_counts. */
struct emit_counts {
	const char *const *k;
	const unsigned long long *v;
	int n;
};
void emit_count_obj(struct cg_rec *r, const char *key, const void *arg);

/* Three numbers (a grid or a block): arg is a const uint32_t[3]. */
void emit_triple(struct cg_rec *r, const char *key, const void *arg);

/* struct emit_part values for them */
#define EMIT_HEXES(h) ((struct emit_part){emit_hex_list, (h)})
#define EMIT_STRS(s) ((struct emit_part){emit_str_list, (s)})
#define EMIT_ACCESS(a) ((struct emit_part){emit_access_list, (a)})
#define EMIT_TRIPLE(v) ((struct emit_part){emit_triple, (v)})
#define EMIT_U64S(u) ((struct emit_part){emit_u64_list, (u)})
#define EMIT_COUNTS(c) ((struct emit_part){emit_count_obj, (c)})

#endif
