/*
 * shim/decide.h -- what the configured policies make the shim do, decided
 * in one function (cg_decide) from the configuration alone:
 * CGSHIM_ON_UPDATE_FAILURE, CGSHIM_ON_VIOLATION and CGSHIM_CAPTURE_MODE.
 * The hooks, the policy (policy.c) and the violation writer (rules.c) ask
 * it; none reads those settings itself. The names of every choice are
 * config.def's (config.h's CG_*_NAMES, generated), cg_decide_name.
 */
#ifndef CGSHIM_DECIDE_H
#define CGSHIM_DECIDE_H

enum cg_ask {
	/* An update refused or predicted refused; arg: the CUresult (the
	 * driver's, or the prediction, -1 for none); arg2: 1 when it is the
	 * update-failure refusal itself (CGS001's, or the driver's 910).
	 * .rewrite: re-instantiate instead (reinstantiate, arg2 set);
	 * .abort: stop before the call (abort, arg 910). */
	CG_ASK_UPDATE,
	/* A violation of a rule that is on; arg: 1 when it is graded a hint.
	 * .abort: stop before the driver call (abort, never for a hint). */
	CG_ASK_VIOLATION,
	/* A begin-capture; arg: the CUstreamCaptureMode asked. .mode: the
	 * one to use, only ever looser (keep: as asked). */
	CG_ASK_CAPTURE_MODE,
};

struct cg_decision {
	int rewrite;
	int abort;
	int mode;
};

struct cg_decision cg_decide(enum cg_ask q, int arg, int arg2);

/* The configured choice of a policy as config.def names it: which is
 * CG_ASK_UPDATE (on_update_failure), CG_ASK_VIOLATION (on_violation) or
 * CG_ASK_CAPTURE_MODE (capture_mode). */
const char *cg_decide_name(enum cg_ask which);

#endif
