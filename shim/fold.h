/*
 * shim/fold.h -- repeats folded, and the stderr print limit (issue 31).
 *
 * A violation of one rule, at one call site, about one object is written
 * once; its repeats are counted here, not written, and the exit writes one
 * "repeat" record per folded key with the total (rules.c). The table is
 * fixed (CG_FOLD_SLOTS, in the library's bss: no allocation) and lock-free
 * (a slot is claimed by compare-and-swap), so a violation on a launch path
 * takes no lock and allocates nothing. A key that finds no slot within
 * CG_FOLD_PROBES is not folded: written as before, counted (cg_fold_full).
 *
 * The print limit: when the log goes to stderr or stdout (CGSHIM_LOG_FILE
 * unset, "stderr" or "stdout"), at most CGSHIM_PRINT_LIMIT violation
 * records are written there; the rest are counted, and the exit writes one
 * closing line saying how many (rules.c). A log file gets every record.
 */
#ifndef CGSHIM_FOLD_H
#define CGSHIM_FOLD_H

#include <stdint.h>

#define CG_FOLD_SLOTS 1024
#define CG_FOLD_PROBES 64

/* One folded key: the site and object as the violation record named them
 * (site_key, obj_key: string literals, the record's field names; NULL when
 * the record has none). Two keys are one when rule, site, object and node
 * (and capture) are equal. */
struct cg_fold_key {
	int rule;
	uint32_t site;
	uint64_t obj;
	int64_t node; /* the node the record names (node_index), -1 none */
	const char *site_key, *obj_key;
	uint64_t capture; /* the capture the record names, 0 none: each its own refusal */
	/* the object's process-unique id when it is a graph or an exec
	 * (model_ids): a handle the driver gives again after a destroy is
	 * another object, not a repeat; 0 for other objects */
	uint64_t obj_id;
};

/* Counts one violation of key k. Returns 1 when it is the first of its key
 * (or the table is full): the caller writes it; 0 for a repeat: counted. */
int cg_fold_note(const struct cg_fold_key *k);
/* Folded keys, for the exit: from *pos (start at 0), the next key seen more
 * than once, with its count; 0 when there is none left. */
int cg_fold_next(int *pos, struct cg_fold_key *k, uint64_t *count);
/* Repeats folded so far (violations not written), keys left unfolded for
 * want of a slot. */
uint64_t cg_fold_repeats(void);
uint64_t cg_fold_full(void);

/* Whether the next violation record may be written: always with a log
 * file or no limit; under the limit, 1 and counted; past it, 0 and
 * counted unprinted. */
int cg_print_take(void);
uint64_t cg_print_unprinted(void);
/* Whether the limit applies (the log is stderr or stdout, limit > 0). */
int cg_print_limited(void);

/* The child of a fork starts with an empty table and counts of its own. */
void cg_fold_after_fork_child(void);

#endif
