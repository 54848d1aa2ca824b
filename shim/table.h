/*
 * shim/table.h -- uthash configured for a guest process. The only file that
 * includes uthash.h. An allocation failure inside a table operation must
 * never end the host: HASH_NONFATAL_OOM makes uthash report it, and the
 * owner of the table degrades the shim to pass-through.
 */
#ifndef CGSHIM_TABLE_H
#define CGSHIM_TABLE_H

#define HASH_NONFATAL_OOM 1
extern int cg_table_oom;
#define uthash_nonfatal_oom(obj) (cg_table_oom = 1)
#include <uthash.h>

#endif
