/*
 * tests/tools/child.c -- the command the launcher tests run.
 *   child env           print LD_PRELOAD and every CGSHIM_* variable, exit 0
 *   child exit N        exit with status N
 *   child kill SIG      kill itself with signal SIG
 *   child wait          print "ready", then sleep until a signal ends it
 *   child writelog      create the file $CGSHIM_LOG_FILE names (%p = own pid),
 *                       with a start record naming the run ($CGSHIM_TALLY_FILE)
 *                       as the shim would, and print its pid
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "env";
	char **e;

	if (!strcmp(cmd, "env")) {
		for (e = environ; *e; e++)
			if (!strncmp(*e, "CGSHIM_", 7) || !strncmp(*e, "LD_PRELOAD=", 11))
				printf("%s\n", *e);
		return 0;
	}
	if (!strcmp(cmd, "exit") && argc > 2)
		return atoi(argv[2]);
	if (!strcmp(cmd, "kill") && argc > 2) {
		fflush(stdout);
		signal(atoi(argv[2]), SIG_DFL);
		kill(getpid(), atoi(argv[2]));
		return 99;
	}
	if (!strcmp(cmd, "wait")) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		printf("ready\n");
		fflush(stdout);
		for (int i = 0; i < 600; i++)
			sleep(1);
		return 98;
	}
	if (!strcmp(cmd, "writelog")) {
		const char *t = getenv("CGSHIM_LOG_FILE");
		char path[4096];
		size_t o = 0;
		FILE *f;

		if (!t)
			return 97;
		for (; *t && o + 24 < sizeof path; t++) {
			if (t[0] == '%' && t[1] == 'p') {
				o += (size_t)snprintf(path + o, sizeof path - o, "%ld", (long)getpid());
				t++;
			} else {
				path[o++] = *t;
			}
		}
		path[o] = '\0';
		f = fopen(path, "a");
		if (!f)
			return 96;
		/* the launcher's run, as the shim's start record names it */
		fprintf(f, "{\"v\":1,\"ev\":\"start\",\"seq\":1,\"ts\":1,\"pid\":%ld,\"tid\":%ld,\"run\":\"%s\"}\n",
			(long)getpid(), (long)getpid(), getenv("CGSHIM_TALLY_FILE") ? getenv("CGSHIM_TALLY_FILE") : "");
		fclose(f);
		printf("%ld\n", (long)getpid());
		return 0;
	}
	fprintf(stderr, "child: unknown command %s\n", cmd);
	return 2;
}
