/*
 * shim/sink.h -- the log's sink (sink.c), for the record builder (log.c)
 * and the fatal-signal path (crashlog.c). The public calls are in log.h.
 */
#ifndef CGSHIM_SINK_H
#define CGSHIM_SINK_H

#include <stddef.h>

/* The pid in every record's header (the child's after fork). */
extern int cg_sink_pid;

/* Write buf whole to the sink if it is still ours (opening a file sink on
 * the first write). Never changes errno, the signal mask or a disposition;
 * never raises SIGPIPE in the host. */
void cg_sink_write(const char *buf, size_t len);
/* on: a fatal signal is being handled (crashlog.c): a file sink not yet
 * open is opened without waiting on a lock the interrupted code may hold (a
 * few tries, then the records are dropped); 0: the program's handler
 * returned, back to waiting. */
void cg_sink_fatal(int on);
/* on: the calling thread (the dump's, dump.c) opens a sink not yet open
 * the same way, without waiting on its lock. */
void cg_sink_nowait(int on);
/* The sink open, or opened now without waiting on its lock: 0; -1 when
 * its lock stayed held (or it cannot be opened). */
int cg_sink_open_nowait(void);
/* In the child after fork: a %p path gets its own file. */
void cg_sink_after_fork_child(void);

#endif
