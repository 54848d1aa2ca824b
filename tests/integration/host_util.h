/*
 * tests/integration/host_util.h -- what the integration host programs
 * (crash_host.c, dump_host.c, hang_lib.c) share: a kernel for the stand-in
 * and output a signal handler may write.
 */
#ifndef CGSHIM_HOST_UTIL_H
#define CGSHIM_HOST_UTIL_H

#include <string.h>
#include <unistd.h>

/* The stand-in driver (tests/standin/driver.c) runs a host function given
 * as a CUfunction: this one, cast so, does nothing. */
static inline void kern(void **p, unsigned long n)
{
	(void)p;
	(void)n;
}

/* m on stdout through write(2): unbuffered and async-signal-safe, so a
 * signal handler may call it and nothing is lost when the process dies. */
static inline void say(const char *m)
{
	(void)!write(1, m, strlen(m));
}

/* What the program's own signal handler prints: dump.py and run.py look
 * for this line to see that it ran. */
static inline void say_app_handler(void)
{
	say("app handler ran\n");
}

#endif
