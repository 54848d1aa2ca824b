/*
 * shim/init.c -- start-up, fork handling, exit.
 *
 * Set-up is complete on the first entry through any door, whatever the
 * constructor order: another library's constructor (libcublasLt's loads
 * libcuda and calls dlsym before ours runs), a thread it starts, or main.
 * The settings are read once (config_once), by our constructor or by
 * init_once, whichever runs first; init_once (sinks, tables, handlers) runs
 * on the first door and reads them first. No state is half-configured: a
 * hook sees SETUP until init_once publishes READY (or OFF, DEGRADED).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call.h"
#include "cgshim/record.h"
#include "config.h"
#include "counters.h"
#include "crashlog.h"
#include "decide.h"
#include "emit.h"
#include "fold.h"
#include "hot.h"
#include "init.h"
#include "rules.h"
#include "doors.h"
#include "dump.h"
#include "findings.h"
#include "locks.h"
#include "log.h"
#include "model.h"
#include "module.h"
#include "policy.h"
#include "resolve.h"
#include "state.h"
#include "summary.h"
#include "suppress.h"

static pthread_once_t init_once_ctl = PTHREAD_ONCE_INIT;

static const char *env_get(const char *name)
{
	return secure_getenv(name);
}

static pthread_once_t config_once_ctl = PTHREAD_ONCE_INIT;

static void config_once(void)
{
	cg_config_load(env_get);
	cg_log_level = cg_cfg.log_level;
	cg_eager_period_set(cg_cfg.eager_sample); /* before any launch is counted */
	if (cg_cfg.disable)
		atomic_store(&cg_state, CG_OFF);
	else
		cg_log_early();
}

__attribute__((constructor)) static void cg_constructor(void)
{
	int saved = errno;
	pthread_once(&config_once_ctl, config_once);
	errno = saved;
}

static void atfork_prepare(void)
{
	cg_log_flush_thread(); /* the child must not write the parent's lines again */
	cg_locks_prepare();
}

static void atfork_parent(void)
{
	cg_locks_parent();
}

/* Every lock of the shim is initialised afresh, not unlocked: its owner is
 * the parent's thread, and an rwlock's write owner is checked by thread id
 * (a forked child blocked on its first update otherwise). locks.def. */
static void atfork_child(void)
{
	cg_locks_child();
	cg_thread_after_fork_child();
	cg_door_after_fork_child();
	cg_log_after_fork_child();
	cg_fold_after_fork_child();
	cg_model_after_fork_child();
	cg_findings_after_fork_child();
	cg_eager_after_fork_child();
	cg_dump_after_fork_child();
	cg_module_after_fork_child();
}

static const char *const level_names[] = CG_L_NAMES, *const format_names[] = CG_FMT_NAMES;

static void write_start_record(void)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	emit_start(CG_L_INFO,
		   &(struct ev_start){.lib = "cgshim",
				      .version = CGSHIM_VERSION,
				      .exe = exe,
				      .ppid = getppid(),
				      /* the launcher's run (its tally file, unique per run): it lists
				       * the logs its processes wrote, not a run's a second before */
				      .run = cg_cfg.tally_file && *cg_cfg.tally_file ? cg_cfg.tally_file : NULL,
				      /* A set rank is in every record's header already: one "rank" key. */
				      .has_rank = !cg_log_rank(),
				      .log_level = level_names[cg_cfg.log_level],
				      .log_format =
					  format_names[cg_cfg.log_format == CG_FMT_JSONL ? CG_FMT_JSONL : CG_FMT_TEXT],
				      .on_update_failure = cg_decide_name(CG_ASK_UPDATE),
				      .on_violation = cg_decide_name(CG_ASK_VIOLATION)});
}

static void exit_handler(void)
{
	int expected = CG_READY;
	if (!atomic_compare_exchange_strong(&cg_state, &expected, CG_FINISHED))
		return;
	cg_tls.in_shim++;
	cg_dump_exit(); /* captures still open: where they are stuck */
	/* A process that made no CUDA call (a compile worker that only
	 * imported the framework) writes nothing, not even a summary. */
	if (cg_cfg.summary && cg_door_any_call())
		cg_summary_exit();
	/* the folded repeats' totals and the print limit's closing line:
	 * written with or without the summary */
	cg_rules_fold_exit();
	cg_suppress_exit();
	cg_findings_exit();
	cg_log_unbuffered(); /* every thread's batch out; later records go straight */
	cg_tls.in_shim--;
}

/* Library unload (dlclose of a process that loaded the shim itself) and
 * exits whose atexit handlers did not reach ours: write what is batched.
 * _exit() runs neither; batched info lines are then lost (errors and
 * warnings were written at once). */
__attribute__((destructor)) static void cg_destructor(void)
{
	cg_log_unbuffered();
}

static pthread_once_t late_exit_once = PTHREAD_ONCE_INIT;

/* Set once the late registration has returned (cg_exit_late_done). */
_Atomic int cg_exit_late_registered CG_HOT_DATA;

static void late_exit_register(void)
{
	atexit(exit_handler);
	atomic_store_explicit(&cg_exit_late_registered, 1, memory_order_release);
}

/* Once CUDA is in use (first capture), register the exit handler again: it
 * then runs before the CUDA runtime's own atexit teardown, while pool and
 * graph-memory attributes can still be read. exit_handler runs once. */
CG_HOT void cg_exit_register_late(void)
{
	pthread_once(&late_exit_once, late_exit_register);
}

/* The door's wiring (cg_ensure_init): every door hands the same one. */
static void (*_Atomic init_wire)(void);

static void init_once(void)
{
	int saved = errno;
	void (*wire)(void) = atomic_load(&init_wire);
	if (wire) /* first: a warning of set-up's own reaches its writer */
		wire();
	pthread_once(&config_once_ctl, config_once);
	if (atomic_load(&cg_state) == CG_OFF) {
		errno = saved;
		return;
	}
	cg_tls.in_init = 1;
	cg_resolve_dlsym();
	if (!cg_real_dlsym) {
		atomic_store(&cg_state, CG_DEGRADED);
		cg_tls.in_init = 0;
		errno = saved;
		return;
	}
	cg_log_open();
	if (cg_model_init() != 0) {
		cg_degrade("model tables could not be allocated");
		cg_tls.in_init = 0;
		errno = saved;
		return;
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	atexit(exit_handler);
	cg_log_set_preamble(write_start_record);
	cg_crash_install();
	atomic_store_explicit(&cg_state, CG_READY, memory_order_release);
	if (cg_log_on(CG_L_WARN))
		cg_dump_install(); /* after READY: the watchdog stops when the shim is not */
	cg_tls.in_init = 0;
	errno = saved;
}

void cg_ensure_init(void (*wire)(void))
{
	if (CG_LIKELY(atomic_load_explicit(&cg_state, memory_order_acquire) != CG_SETUP))
		return;
	/* A CUDA call made by init_once's own work on this thread (none is
	 * expected; pthread_once would deadlock on it) passes through. */
	if (cg_tls.in_init) {
		cg_door_early();
		return;
	}
	atomic_store(&init_wire, wire);
	pthread_once(&init_once_ctl, init_once);
}
