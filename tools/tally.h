/*
 * tools/tally.h -- the launcher's side of CGSHIM_TALLY_FILE (shim/findings.c
 * writes it): findings of the whole launched tree, for --error-exitcode and
 * the ERROR SUMMARY line.
 */
#ifndef CGSHIM_TOOLS_TALLY_H
#define CGSHIM_TOOLS_TALLY_H

struct tally {
	char *path;	/* the file (malloc'd), NULL when none could be made */
	int own;	/* made by this launcher: removed at the end */
	long long from; /* its size at launch: a nested launcher reads its own lines */
	long long errors, warnings;
	int processes; /* processes with a finding */
};

/* Before the launch: use $CGSHIM_TALLY_FILE when set (a nested launcher, or
 * the user's), else make a private temporary file and set the variable. */
void tally_begin(struct tally *t);

/* After the launch: sum the lines (per pid the largest count of each
 * column), remove the file when it is ours. */
void tally_end(struct tally *t);

/* The closing line on stderr: "cgshim: ERROR SUMMARY: N errors, N warnings
 * (in N processes)" and where to see them (logs: the report command). */
void tally_print(const struct tally *t, const char *logs);

/* The status to exit with: code when an error was recorded and code is
 * not 0, else the program's own status rc. */
int tally_status(const struct tally *t, int rc, int code);

#endif
