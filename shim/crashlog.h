/*
 * shim/crashlog.h -- the fatal-signal path: a crash leaves a complete log
 * (crashlog.c says how, and what it races with).
 */
#ifndef CGSHIM_CRASHLOG_H
#define CGSHIM_CRASHLOG_H

#include <signal.h>
#include <stdatomic.h>

/* Take SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL (those the program does
 * not ignore), keeping the program's actions to hand each signal on to.
 * Once, from init_once; nothing when CGSHIM_LOG=off. */
void cg_crash_install(void);

/* Hand signal sig on to the program's action p as the kernel would have
 * called it: its sa_mask and sig blocked unless SA_NODEFER, SA_SIGINFO's
 * three arguments, SA_RESETHAND's one use (marked in *spent, which may be
 * NULL). Returns 1 when a handler was called and returned, 0 when p is
 * SIG_DFL, SIG_IGN or spent (nothing done). Async-signal-safe. Also the
 * dump's signal (dump.c). */
int cg_signal_chain(int sig, const struct sigaction *p, _Atomic int *spent, siginfo_t *si, void *uc);
/* Whether p is a handler to call (not SIG_DFL, SIG_IGN, or spent). */
int cg_signal_has_handler(const struct sigaction *p, _Atomic int *spent);

#endif
