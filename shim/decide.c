/* shim/decide.c -- the policies' decisions, in one function (decide.h). */
#include <stddef.h>

#include "config.h"
#include "cuda-abi.h"
#include "decide.h"
#include "hot.h"

CG_HOT struct cg_decision cg_decide(enum cg_ask q, int arg, int arg2)
{
	struct cg_decision d = {0, 0, arg};
	switch (q) {
	case CG_ASK_UPDATE:
		d.rewrite = arg2 && cg_cfg.on_update_failure == CG_UPD_REINSTANTIATE;
		d.abort = arg == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && cg_cfg.on_update_failure == CG_UPD_ABORT;
		break;
	case CG_ASK_VIOLATION:
		/* a hint is no fault: it never stops the program */
		d.abort = cg_cfg.on_violation == CG_VIOL_ABORT && !arg;
		break;
	case CG_ASK_CAPTURE_MODE: {
		/* loosest last: global 0 < thread_local 1 < relaxed 2 */
		int want = cg_cfg.capture_mode == CG_CAPMODE_RELAXED	    ? CU_STREAM_CAPTURE_MODE_RELAXED
			   : cg_cfg.capture_mode == CG_CAPMODE_THREAD_LOCAL ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
									    : arg;
		if (cg_cfg.capture_mode != CG_CAPMODE_KEEP && arg >= CU_STREAM_CAPTURE_MODE_GLOBAL && want > arg)
			d.mode = want;
		break;
	}
	}
	return d;
}

const char *cg_decide_name(enum cg_ask which)
{
	static const char *const upd[] = CG_UPD_NAMES, *const viol[] = CG_VIOL_NAMES, *const cap[] = CG_CAPMODE_NAMES;
	switch (which) {
	case CG_ASK_UPDATE:
		return upd[cg_cfg.on_update_failure];
	case CG_ASK_VIOLATION:
		return viol[cg_cfg.on_violation];
	case CG_ASK_CAPTURE_MODE:
		return cap[cg_cfg.capture_mode];
	}
	return "";
}
