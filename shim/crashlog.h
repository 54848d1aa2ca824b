/*
 * shim/crashlog.h -- the fatal-signal path: a crash leaves a complete log
 * (crashlog.c says how, and what it races with).
 */
#ifndef CGSHIM_CRASHLOG_H
#define CGSHIM_CRASHLOG_H

/* Take SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL (those the program does
 * not ignore), keeping the program's actions to hand each signal on to.
 * Once, from init_once; nothing when CGSHIM_LOG=off. */
void cg_crash_install(void);

#endif
