/*
 * shim/findings.h -- the process's tally of findings (violation records by
 * severity) for the launched tree: CGSHIM_TALLY_FILE, which the launcher
 * reads for --error-exitcode and its ERROR SUMMARY line. A leaf above the
 * config: the rules count here, the exit path writes the last line.
 */
#ifndef CGSHIM_FINDINGS_H
#define CGSHIM_FINDINGS_H

/* One finding of severity "error" (is_error) or "warn" was recorded. The
 * first error of the process appends its line at once, so a process that
 * later crashes still counts; else a relaxed atomic add. */
void cg_findings_note(int is_error);

/* At exit: append this process's line when it recorded any finding. */
void cg_findings_exit(void);

/* In a fork child: the parent's findings are the parent's. */
void cg_findings_after_fork_child(void);

#endif
