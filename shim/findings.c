/*
 * shim/findings.c -- the process's tally of findings (findings.h).
 *
 * Line format of CGSHIM_TALLY_FILE (docs/tools.md): "PID ERRORS WARNINGS\n",
 * appended with one write(2) (O_APPEND: lines of several processes do not
 * interleave). A process may write several lines; the reader keeps, per
 * pid, the largest of each column.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "findings.h"

static _Atomic long long n_err, n_warn;

static void findings_write(void)
{
	const char *path = cg_cfg.tally_file;
	char line[80];
	int fd, n, saved = errno;

	if (!path || !*path)
		return;
	n = snprintf(line, sizeof line, "%ld %lld %lld\n", (long)getpid(), atomic_load(&n_err), atomic_load(&n_warn));
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd >= 0) {
		/* Best effort: a full disk or a vanished launcher costs the
		 * summary line, never the host. */
		if (write(fd, line, (size_t)n) < 0) {
		}
		close(fd);
	}
	errno = saved;
}

void cg_findings_note(int is_error)
{
	if (!is_error) {
		atomic_fetch_add_explicit(&n_warn, 1, memory_order_relaxed);
		return;
	}
	if (atomic_fetch_add_explicit(&n_err, 1, memory_order_relaxed) == 0)
		findings_write();
}

void cg_findings_exit(void)
{
	if (atomic_load(&n_err) || atomic_load(&n_warn))
		findings_write();
}

void cg_findings_after_fork_child(void)
{
	atomic_store(&n_err, 0);
	atomic_store(&n_warn, 0);
}
