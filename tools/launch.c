/* tools/launch.c -- preload the shim and run the command, shell-style. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

#ifndef CGSHIM_LIBDIR
#define CGSHIM_LIBDIR "/usr/local/lib"
#endif

static const int launch_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t launch_child;

char *launch_find_lib(void)
{
	char self[PATH_MAX], cand[PATH_MAX + 64], *slash, *res;
	const char *env = getenv("CGSHIM_LIB");
	ssize_t n;

	if (env && *env)
		return strdup(env);
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof cand, "%s/../shim/libcgshim.so", self);
			if (access(cand, R_OK) == 0) {
				res = realpath(cand, NULL);
				return res ? res : strdup(cand);
			}
		}
	}
	return strdup(CGSHIM_LIBDIR "/libcgshim.so");
}

int launch_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t ll = strlen(lib);
	char *val;
	int rc;

	/* Already first: nothing to do (a nested cgshim, or the user did it). */
	if (old && !strncmp(old, lib, ll) && (old[ll] == '\0' || old[ll] == ':' || old[ll] == ' '))
		return 0;
	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	val = malloc(ll + strlen(old) + 2);
	if (!val)
		return -1;
	/* ld.so splits on both ':' and ' '; keep the user's separator style. */
	sprintf(val, "%s%c%s", lib, strchr(old, ':') ? ':' : ' ', old);
	rc = setenv("LD_PRELOAD", val, 1);
	free(val);
	return rc;
}

/*
 * A terminal's ^C reaches every process of the foreground group, the child
 * included (si_code SI_KERNEL); forwarding that one again would deliver it
 * twice. Signals sent to us alone (kill, timeout(1): SI_USER, SI_QUEUE) are
 * forwarded.
 */
static void launch_forward(int sig, siginfo_t *info, void *ctx)
{
	int saved = errno;

	(void)ctx;
	if (launch_child > 0 && !(info && info->si_code == SI_KERNEL))
		kill(launch_child, sig);
	errno = saved;
}

int launch_run(char **argv)
{
	struct sigaction sa, old[sizeof launch_signals / sizeof launch_signals[0]];
	sigset_t block, prev;
	int status = 0, err;
	unsigned i;
	pid_t pid, w;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = launch_forward;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);

	/* Block the forwarded signals across fork so none is lost between
	 * fork and the handler knowing the child's pid. */
	sigemptyset(&block);
	for (i = 0; i < sizeof launch_signals / sizeof launch_signals[0]; i++)
		sigaddset(&block, launch_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &prev);
	for (i = 0; i < sizeof launch_signals / sizeof launch_signals[0]; i++)
		sigaction(launch_signals[i], &sa, &old[i]);

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "cgshim: fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &prev, NULL);
		return 127;
	}
	if (pid == 0) {
		for (i = 0; i < sizeof launch_signals / sizeof launch_signals[0]; i++)
			sigaction(launch_signals[i], &old[i], NULL);
		sigprocmask(SIG_SETMASK, &prev, NULL);
		execvp(argv[0], argv);
		err = errno;
		fprintf(stderr, "cgshim: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
	}
	launch_child = pid;
	sigprocmask(SIG_SETMASK, &prev, NULL);

	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);

	launch_child = 0;
	for (i = 0; i < sizeof launch_signals / sizeof launch_signals[0]; i++)
		sigaction(launch_signals[i], &old[i], NULL);
	if (w < 0) {
		fprintf(stderr, "cgshim: waitpid: %s\n", strerror(errno));
		return 127;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 127;
}
