/*
 * shim/dump.h -- "where is it stuck?": the dump of every thread blocked in a
 * CUDA call, the live captures and each stream's last work, on a signal
 * (CGSHIM_DUMP_SIGNAL), on a stall (CGSHIM_STALL_S) and at exit with
 * captures still open. dump.c says how, docs/dump.md what it writes.
 */
#ifndef CGSHIM_DUMP_H
#define CGSHIM_DUMP_H

#include <stdatomic.h>
#include <stdint.h>

#include "log.h"
#include "state.h"

/* Nonzero while dumps can be asked for (a signal or a stall threshold is
 * set and the shim is READY): the blocking hooks note their calls. */
extern _Atomic int cg_dump_on CG_HIDDEN;

/* From init_once: take the signal, start the watchdog thread. Nothing when
 * neither CGSHIM_DUMP_SIGNAL nor CGSHIM_STALL_S asks for dumps. */
void cg_dump_install(void) CG_HIDDEN;
/* The exit handler: a dump when captures are still open; the watchdog
 * stops. */
void cg_dump_exit(void) CG_HIDDEN;
/* In the fork child: its own pipe; the watchdog starts again at the
 * child's first blocking call. */
void cg_dump_after_fork_child(void) CG_HIDDEN;

/* The calling thread enters blocking call hid of kind (doors.h's enum
 * cg_block_kind says what a[0..3] are), taken at site; leaves it. Only
 * while cg_dump_on (the hooks check). hid: a hook id (HID_*), or an id of
 * cg_dump_call_id for a call outside hooks.def. */
void cg_dump_blocked(int hid, int kind, const uintptr_t a[4], uint32_t site) CG_HIDDEN;
void cg_dump_unblocked(void) CG_HIDDEN;
/* The id under which the dump names a blocking call that is no hook of
 * hooks.def (the NCCL teardown calls): name must live as long as the
 * process (a literal). -1 when the table (8 names) is full. */
int cg_dump_call_id(const char *name) CG_HIDDEN;

/* Write a dump now (tests, and the watchdog): reason "signal", "stall",
 * "exit". Returns the dump's number, or -1 when another dump was being
 * written (bounded wait) or dumps are off. */
int cg_dump_now(const char *reason) CG_HIDDEN;

/* A part another module adds to every dump (issue 33's NCCL executables:
 * helper `nccl`). fn runs on the dumping thread after the stream parts,
 * with nothing locked; it must take no lock another thread may hold
 * forever (trylock, bounded) and make no blocking CUDA call. It writes its
 * records with cg_dump_emit (its fields: rows of DUMP in
 * include/cgshim/records.def, its own part name) and its lines of the
 * human-readable block with cg_dump_text. At most 4 parts. */
typedef void (*cg_dump_part_fn)(void);
int cg_dump_add_part(cg_dump_part_fn fn) CG_HIDDEN;
/* A "dump" record of the dump being written: f's dump and reason are set
 * here, its part and fields by the caller. Written only with a JSONL log
 * (in the text format the block on stderr is the dump). */
struct ev_dump;
void cg_dump_emit(struct ev_dump *f) CG_HIDDEN;
/* A line (printf format) of the dump's human-readable block on stderr. */
void cg_dump_text(const char *fmt, ...) CG_HIDDEN __attribute__((format(printf, 1, 2)));

#endif
