/*
 * shim/state.c -- the readiness state, the per-thread context and the one
 * way down to pass-through (state.h has the contract).
 *
 * Here, not in init.c: every room reads cg_state and cg_tls, and the model
 * degrades, so they live below all of them (shim/layers.txt); init.c, near
 * the top, only moves the state forward.
 */
#include <stdatomic.h>

#include "log.h"
#include "hot.h"
#include "state.h"

_Atomic int cg_state CG_HOT_DATA = CG_SETUP;
CG_TLS struct cg_tls cg_tls;
static _Atomic int degraded_warned;

void cg_degrade(const char *why)
{
	int expected = CG_READY;
	atomic_compare_exchange_strong(&cg_state, &expected, CG_DEGRADED);
	if (!atomic_exchange(&degraded_warned, 1))
		cg_warn("internal failure (%s): continuing as a pure pass-through", why);
}
