/*
 * shim/table.h -- uthash configured for a guest process. The only file that
 * includes uthash.h. An allocation failure inside a table operation must
 * never end the host: HASH_NONFATAL_OOM makes uthash report it, and the
 * owner of the table degrades the shim to pass-through.
 *
 * A table that empties frees its header and bucket array, and allocates
 * them again with its next item: a capture loop (one capture, graph and
 * exec alive at a time) did that for three tables every iteration. Freed
 * blocks of those two sizes are kept for reuse (a few of each, lock-free).
 */
#ifndef CGSHIM_TABLE_H
#define CGSHIM_TABLE_H

#include <stddef.h>

#define HASH_NONFATAL_OOM 1
extern int cg_table_oom;
#define uthash_nonfatal_oom(obj) (cg_table_oom = 1)
void *cg_table_malloc(size_t sz);
void cg_table_free(void *p, size_t sz);
#define uthash_malloc(sz) cg_table_malloc(sz)
#define uthash_free(ptr, sz) cg_table_free((ptr), (sz))
#include <uthash.h>

#endif
