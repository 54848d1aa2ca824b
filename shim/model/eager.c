/*
 * shim/model/eager.c -- the top eager kernels by call site (issue 32,
 * coverage): the sample a launch wrapper takes when its thread's count
 * reached the next sample (counters.h). Never on the launch's common path:
 * at the default period one eager launch in 256 on average comes here.
 */
#include "../counters.h"
#include "model-int.h"

void model_eager_sample(CUfunction f)
{
	struct cg_eager_tls *t = &cg_eager_tls;
	struct cg_eager_ent *e;
	const char *nm = NULL;
	uint32_t site;
	cg_eager_next_gap();
	if (t->busy) { /* a signal handler's launch inside a sample */
		atomic_fetch_add_explicit(&t->lost, 1, memory_order_relaxed);
		return;
	}
	t->busy = 1;
	/* the shim's and the CUDA libraries' frames are skipped by module: the
	 * first frame kept is the application's */
	site = cg_site_here(0);
	e = cg_eager_ent_for((uintptr_t)f, site, nodes_unloads());
	if (e) {
		/* once per key and thread: the name while the handle is known
		 * live (it is being launched), copied (the driver's string dies
		 * with its module) */
		if (!atomic_load_explicit(&e->samples, memory_order_relaxed) && (nm = cg_launch_name(f))) {
			strncpy(e->name, nm, sizeof e->name - 1);
			e->name[sizeof e->name - 1] = 0;
		}
		atomic_store_explicit(&e->samples, atomic_load_explicit(&e->samples, memory_order_relaxed) + 1,
				      memory_order_release);
	}
	t->busy = 0;
}
