/*
 * shim/model/devices.c -- devices: which ones the process uses, free-memory sampling, graph-memory records.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

/* Devices the process was seen using (bit d): graph memory is sampled on
 * each of them at exit. Set where the shim learns a device (a context's,
 * a pool's, a memory node's), never on the launch path. */
static _Atomic unsigned devs_seen CG_HOT_DATA;

CG_HOT void model_dev_seen(int d)
{
	/* read first: a device seen already (every call of a loop) leaves the
	 * shared line clean instead of a locked write to it each time */
	if (d >= 0 && d < CG_MAX_DEV && !(atomic_load_explicit(&devs_seen, memory_order_relaxed) & 1u << d))
		atomic_fetch_or_explicit(&devs_seen, 1u << d, memory_order_relaxed);
}

unsigned model_devs_seen(void)
{
	return atomic_load_explicit(&devs_seen, memory_order_relaxed);
}

/* 1 once the driver has said the process sees one device, device 0 (-1:
 * another answer; 0: not asked yet). The count is fixed from cuInit on, so
 * every context's device is then 0, and with no context current the answer
 * is 0 as well: cg_current_device answers without cuCtxGetDevice (issue 36:
 * a driver call and its lines each instantiation and allocation, ~0.3 us
 * cold on the H200). Learned after the first answer of device 0, whose
 * model_dev_seen has then run, while the model counts no live capture:
 * the count is not among the queries made inside one (docs/design.md, as
 * cuMemGetInfo); a multi-device process's first such answer may come in
 * another stream's capture, and the next one outside learns. */
static _Atomic int one_device CG_HOT_DATA;

static CG_COLD void one_device_learn(void)
{
	int n = 0;
	if (drv_cuDeviceGetCount && drv_cuDeviceGetCount(&n) == CUDA_SUCCESS)
		atomic_store_explicit(&one_device, n == 1 ? 1 : -1, memory_order_relaxed);
}

CG_HOT int cg_current_device(void)
{
	CUdevice d = 0;
	int one = atomic_load_explicit(&one_device, memory_order_relaxed);
	if (CG_LIKELY(one > 0))
		return 0;
	if (drv_cuCtxGetDevice && drv_cuCtxGetDevice(&d) == CUDA_SUCCESS && d >= 0 && d < CG_MAX_DEV) {
		model_dev_seen(d);
		if (CG_UNLIKELY(!one && d == 0) && !atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
			one_device_learn();
		return d;
	}
	return 0;
}

/* Budget of CGSHIM_MEMINFO=auto: cuMemGetInfo costs ~7 us on an H100
 * (~45 us right after graph work), a capture + instantiate has four
 * boundaries (begin, end, instantiate before and after). Under auto a
 * steady capture (below) takes no sample at all, and a boundary first
 * tries the last sample of its device (reuse below); real samples go on
 * while they have cost under 4% of the time since the first one, plus a
 * start-up allowance: the first MEMINFO_FIRST samples whatever they cost
 * (on a loaded GPU host the first samples took so long that the seed-001
 * script's first capture, under tests/gpu/all beside other suites, went
 * without one), then MEMINFO_ALLOWANCE_NS (about 35 samples) on top of
 * the share. Steady captures are what a tight
 * capture loop makes, so the budget is spent on captures that say
 * something new: at 0.5% the seed-001 script's table lost every
 * instantiation delta from its 34th capture on, at 2% from its 124th.
 * CGSHIM_MEMINFO=on samples every boundary for real. */
#define MEMINFO_SHARE 25
#define MEMINFO_ALLOWANCE_NS 250000ull
#define MEMINFO_FIRST 35
/* Reuse: a boundary takes the device's previous sample instead of a new
 * one when nothing the shim sees has moved device memory since (mem_epoch:
 * bumped by model_mem_moved from the hooks that allocate, free, trim,
 * instantiate, destroy an exec, upload or first-launch an exec)
 * and the sample is younger than MEMINFO_REUSE_NS. The age bound limits
 * what the shim cannot see (VMM cuMemCreate, managed memory, lazy module
 * loads, other processes) to what happens in that window. Typical wins: an
 * instantiate right after its end-capture reuses the end's sample; a
 * capture with no allocation inside reuses its begin's sample at its end. */
#define MEMINFO_REUSE_NS 1000000ull
static _Atomic uint64_t meminfo_t0, meminfo_spent, meminfo_taken;
static _Atomic long long meminfo_skipped, meminfo_reused;
static _Atomic int meminfo_hold; /* calls to skip before the budget is looked at again */
static _Atomic uint64_t mem_epoch;
static _Atomic int settle_owed; /* a move since the last quiet point's sample (model_mem_quiet) */
static struct {
	int have;
	size_t free;
	uint64_t epoch, ns;
} last_sample[CG_MAX_DEV];

CG_HOT void model_mem_moved(void)
{
	atomic_fetch_add_explicit(&mem_epoch, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&settle_owed, memory_order_relaxed))
		atomic_store_explicit(&settle_owed, 1, memory_order_relaxed);
}

/* Free device memory now, or 0 when a capture is live (cuMemGetInfo is
 * sampled only outside captures), sampling is off, or over its budget.
 * Under auto also 0 below info level: the samples' only readers are the
 * info-level records (capture, call, the report's memory table), and a
 * program run with the default warn level on stderr paid a real
 * cuMemGetInfo at every instantiation for a record never written. */
static int sample_free(size_t *free_out)
{
	size_t fr = 0, total = 0;
	uint64_t t0, t1, first, ep;
	int dev;
	if (cg_cfg.meminfo == CG_MEMINFO_OFF || atomic_load(&cg_live_captures) || !drv_cuMemGetInfo_v2 ||
	    (cg_cfg.meminfo == CG_MEMINFO_AUTO && !cg_log_on(CG_L_INFO)))
		return 0;
	dev = cg_current_device();
	ep = atomic_load_explicit(&mem_epoch, memory_order_relaxed);
	t0 = cg_now_ns();
	if (cg_cfg.meminfo == CG_MEMINFO_AUTO) {
		int hit = 0;
		pthread_mutex_lock(&model_last_lock);
		if (last_sample[dev].have && last_sample[dev].epoch == ep &&
		    t0 - last_sample[dev].ns < MEMINFO_REUSE_NS) {
			*free_out = last_sample[dev].free;
			hit = 1;
		}
		pthread_mutex_unlock(&model_last_lock);
		if (hit) {
			atomic_fetch_add_explicit(&meminfo_reused, 1, memory_order_relaxed);
			return 1;
		}
	}
	/* Over budget, the next calls skip without even reading the clock. */
	if (cg_cfg.meminfo == CG_MEMINFO_AUTO && atomic_load_explicit(&meminfo_hold, memory_order_relaxed) > 0) {
		atomic_fetch_sub_explicit(&meminfo_hold, 1, memory_order_relaxed);
		atomic_fetch_add(&meminfo_skipped, 1);
		return 0;
	}
	first = atomic_load(&meminfo_t0);
	if (!first) {
		uint64_t zero = 0;
		atomic_compare_exchange_strong(&meminfo_t0, &zero, t0);
		first = atomic_load(&meminfo_t0);
	}
	if (cg_cfg.meminfo == CG_MEMINFO_AUTO && atomic_load(&meminfo_taken) >= MEMINFO_FIRST &&
	    atomic_load(&meminfo_spent) > (t0 - first) / MEMINFO_SHARE + MEMINFO_ALLOWANCE_NS) {
		atomic_store_explicit(&meminfo_hold, 15, memory_order_relaxed);
		atomic_fetch_add(&meminfo_skipped, 1);
		return 0;
	}
	if (drv_cuMemGetInfo_v2(&fr, &total) != CUDA_SUCCESS)
		return 0;
	t1 = cg_now_ns();
	atomic_fetch_add(&meminfo_spent, t1 - t0);
	atomic_fetch_add(&meminfo_taken, 1);
	pthread_mutex_lock(&model_last_lock);
	last_sample[dev].have = 1;
	last_sample[dev].free = fr;
	last_sample[dev].epoch = ep; /* read before the query: a move during it invalidates */
	last_sample[dev].ns = t1;
	pthread_mutex_unlock(&model_last_lock);
	*free_out = fr;
	return 1;
}

/* Steady captures (issue 17 point 3, issue 19). A begin site whose last
 * STEADY_AFTER captures had the same shape (node count, memory nodes and
 * their bytes) and moved no memory the hooks could not name (the capture's
 * unattributed 0, the instantiation's delta 0), each begun with as many
 * executables alive as the one before, is steady: a capture from
 * it takes no sample at its begin or end, nor its instantiation when the
 * graph has that shape again (the records say "meminfo": "steady"), except
 * every STEADY_RECHECK-th, which samples for real and keeps or ends the
 * state. A capture loop or PyTorch's capture of the same graph again pays
 * no cuMemGetInfo; each new shape (a serving engine's batch sizes, the
 * seed-001 script) is sampled in full. Entries: a small table by begin
 * site, under model_last_lock; a site that finds no slot is never steady. */
#define STEADY_SLOTS 64
#define STEADY_AFTER 2
#define STEADY_RECHECK 64
/* A site none of whose captures was instantiated (the graphs an updating
 * program captures to update its executables with: vLLM-style replay, the
 * update-fresh bench) is judged at each capture's end instead, by the
 * graph's node and memory-node counts (n_cap_same, cshape): without that it
 * was never steady, and its samples, right before the update, made each
 * update ~3 us slower on the H100 (bench/split.sh, update-fresh 1.54 with
 * samples, 1.05 without). */
static struct steady {
	uint32_t site;
	int n_same, cap_ok, skipped; /* skipped: last_capture took no samples */
	int live_same;		     /* as many executables alive as at the previous begin */
	int n_cap_same;		     /* consecutive captures judged at their end alone */
	long long live;
	unsigned skips, insts;
	uint64_t shape, cshape, last_capture;
} steady_tab[STEADY_SLOTS] __attribute__((aligned(64)));
/* One line an entry (issue 36: a begin, an end and an instantiation of a
 * capture loop each read their site's entry, which straddled two). */
_Static_assert(sizeof(struct steady) == 64, "struct steady: one cache line");
static _Atomic long long meminfo_steady;

static unsigned steady_hint; /* the slot found last: a capture's end and instantiation follow its begin */

/* The judgement is made under auto and off, not under on (every boundary
 * sampled). Under off no sample is ever taken: a capture is judged by its
 * shape and the executables alive alone (a sample's evidence, have and a
 * zero delta, is not asked for), so a capture loop's records are condensed
 * as under auto (call.h, CG_CALL_REPEAT) and say nothing of memory; before,
 * off made every call of the loop an info record (capture-64 1.14 in
 * bench/run.py against auto's 1.06, docs/measurements.md). */
static inline int steady_judged(void)
{
	return cg_cfg.meminfo != CG_MEMINFO_ON;
}

static inline int steady_blind(void)
{
	return cg_cfg.meminfo == CG_MEMINFO_OFF;
}

/* The entry whose site began capture id last (instantiations know their
 * graph's capture, not its begin site). */
static CG_HOT struct steady *steady_of_capture_locked(uint64_t capture)
{
	if (steady_tab[steady_hint].site && steady_tab[steady_hint].last_capture == capture)
		return &steady_tab[steady_hint];
	for (unsigned i = 0; i < STEADY_SLOTS; i++)
		if (steady_tab[i].site && steady_tab[i].last_capture == capture) {
			steady_hint = i;
			return &steady_tab[i];
		}
	return NULL;
}

static CG_HOT struct steady *steady_find_locked(uint32_t site, int add)
{
	for (unsigned i = 0, h = site * 2654435761u >> 26; i < STEADY_SLOTS; i++) {
		unsigned k = (h + i) % STEADY_SLOTS;
		struct steady *e = &steady_tab[k];
		if (e->site == site) {
			steady_hint = k;
			return e;
		}
		if (!e->site) {
			if (!add)
				return NULL;
			memset(e, 0, sizeof *e);
			e->site = site;
			steady_hint = k;
			return e;
		}
	}
	return NULL;
}

CG_HOT int model_meminfo_steady_begin(uint32_t site)
{
	int skip = 0;
	long long live;
	if (!steady_judged() || !site)
		return 0;
	live = model_execs_live();
	pthread_mutex_lock(&model_last_lock);
	struct steady *e = steady_find_locked(site, 1);
	if (e) {
		/* A loop that keeps its executables (a serving engine's batch
		 * sizes, the seed-001 script) grows: never steady. */
		e->live_same = e->live == live;
		e->live = live;
		if (!e->live_same)
			e->n_same = e->n_cap_same = 0;
	}
	if (e && (e->n_same >= STEADY_AFTER || (!e->insts && e->n_cap_same >= STEADY_AFTER)))
		skip = ++e->skips % STEADY_RECHECK != 0;
	pthread_mutex_unlock(&model_last_lock);
	if (skip && !steady_blind()) /* a sample not taken (off takes none) */
		atomic_fetch_add_explicit(&meminfo_steady, 1, memory_order_relaxed);
	return skip;
}

static CG_HOT void steady_capture_locked(uint32_t site, uint64_t capture, int skipped, int have, long long unattributed)
{
	struct steady *e = steady_find_locked(site, 1);
	if (e) {
		e->last_capture = capture;
		e->skipped = skipped;
		if (!skipped)
			e->cap_ok = (have || steady_blind()) && unattributed == 0;
	}
}

CG_HOT void model_meminfo_steady_capture(uint32_t site, uint64_t capture, int skipped, int have, long long unattributed)
{
	if (!steady_judged() || !site)
		return;
	pthread_mutex_lock(&model_last_lock);
	steady_capture_locked(site, capture, skipped, have, unattributed);
	pthread_mutex_unlock(&model_last_lock);
}

CG_HOT void model_meminfo_steady_ended(uint64_t capture, const struct model_cap_end *ce, int have_shape,
				       uint64_t cshape)
{
	int cap = ce->steady_do && ce->steady_key, end = have_shape && capture;
	if (!steady_judged() || !(cap || end))
		return;
	pthread_mutex_lock(&model_last_lock);
	if (cap)
		steady_capture_locked(ce->steady_key, capture, ce->steady_skipped, ce->steady_have,
				      ce->steady_unattributed);
	struct steady *e = end ? steady_of_capture_locked(capture) : NULL;
	if (e) {
		int same = e->cshape == cshape && (e->skipped || (e->cap_ok && e->live_same));
		e->n_cap_same = same ? e->n_cap_same + !e->skipped : 0;
		e->cshape = cshape;
	}
	pthread_mutex_unlock(&model_last_lock);
}

CG_HOT int model_meminfo_steady_inst(uint64_t capture, uint64_t shape)
{
	int skip = 0;
	if (!steady_judged() || !capture)
		return 0;
	pthread_mutex_lock(&model_last_lock);
	struct steady *e = steady_of_capture_locked(capture);
	if (e && e->skipped) {
		skip = e->shape == shape;
		if (!skip)
			e->n_same = 0; /* a new shape from a steady site: sampled again from now */
	}
	pthread_mutex_unlock(&model_last_lock);
	return skip;
}

void model_meminfo_steady_inst_done(uint64_t capture, uint64_t shape, int have, long long delta)
{
	if (!steady_judged() || !capture)
		return;
	pthread_mutex_lock(&model_last_lock);
	struct steady *e = steady_of_capture_locked(capture);
	if (e)
		e->insts++;
	if (e && !e->skipped) {
		int same = (have || steady_blind()) && delta == 0 && e->cap_ok && e->live_same && e->shape == shape;
		e->n_same = same ? e->n_same + 1 : 0;
		e->shape = shape;
	}
	pthread_mutex_unlock(&model_last_lock);
}

long long model_meminfo_steady(void)
{
	return atomic_load(&meminfo_steady);
}

const char *model_meminfo_word(int steady)
{
	return steady && cg_cfg.meminfo == CG_MEMINFO_AUTO ? "steady" : NULL;
}

long long model_meminfo_reused(void)
{
	return atomic_load(&meminfo_reused);
}

long long model_meminfo_skipped(void)
{
	return atomic_load(&meminfo_skipped);
}

int model_sample_free(size_t *free_out)
{
	return sample_free(free_out);
}

/* Issue 19: a begin-capture that queried cuMemGetInfo itself paid 20-26 us
 * on the first capture of a C program on the H100 host and 52-67 us in
 * PyTorch, whose capture_begin allocates its private pool's first segment
 * (cuMemAlloc, outside the capture) just before the begin; a begin within
 * MEMINFO_REUSE_NS of a mover's sample, with no other move between, reuses
 * it (the reuse above). Not while the last begin was steady: a steady
 * capture loop takes no samples at all, and its movers take none either.
 * The budget bounds what this costs a program that allocates much and
 * never captures. */
static _Atomic int last_begin_steady;

CG_HOT void model_meminfo_begin_was(int steady)
{
	atomic_store_explicit(&last_begin_steady, steady, memory_order_relaxed);
}

/* Whether a sample taken ahead of the next begin may pay off: under auto,
 * while the captures being made are not steady (settled and quiet points). */
static int sample_ahead(void)
{
	return cg_cfg.meminfo == CG_MEMINFO_AUTO && !atomic_load_explicit(&last_begin_steady, memory_order_relaxed);
}

void model_mem_settled(void)
{
	size_t fr;
	if (sample_ahead())
		(void)sample_free(&fr);
}

/* A synchronize is the quiet point before a capture: PyTorch's
 * torch.cuda.graph synchronizes the device, collects garbage and begins,
 * 0.2 ms after the synchronize on the H200 host but 2 ms or more after the
 * last mover (its first kernels' library loads, whose lazy module loads at
 * the launches after them the epoch cannot see). A first begin that
 * queried cuMemGetInfo itself paid ~45 us there. Only owed samples are
 * taken (something moved since the last quiet point), so a loop that
 * synchronizes with a settled allocator pays nothing. */
void model_mem_quiet(void)
{
	size_t fr;
	if (!sample_ahead() || !atomic_load_explicit(&settle_owed, memory_order_relaxed) ||
	    !atomic_exchange(&settle_owed, 0))
		return;
	if (!sample_free(&fr))
		atomic_store(&settle_owed, 1); /* a capture is live or the budget said no: the next one */
}

/* The facts of one graphmem record for device dev (four driver queries,
 * made only when the info-level record is written and no capture is
 * live). Returns 0 when the attributes could not be read. */
static int graphmem_dev(int dev, const char *when, CUgraphExec e, int exec_dev, int launch_dev,
			unsigned long long exec_bytes, struct ev_graphmem *o)
{
	cuuint64_t v[4] = {0, 0, 0, 0};
	for (int i = 0; i < 4; i++)
		if (real_cuDeviceGetGraphMemAttribute(dev, (CUgraphMem_attribute)i, &v[i]) != CUDA_SUCCESS)
			return 0;
	*o = (struct ev_graphmem){
	    .dev = dev, .used = v[0], .used_high = v[1], .reserved = v[2], .reserved_high = v[3], .when = when};
	if (e) {
		o->exec = (uintptr_t)e;
		o->has_exec = 1;
		o->exec_dev = exec_dev;
		o->has_exec_dev = 1;
		o->exec_bytes = exec_bytes;
		o->has_exec_bytes = 1;
		o->launch_dev = launch_dev;
		o->has_launch_dev = launch_dev != exec_dev;
	} else {
		/* exit: what the model holds for the device */
		CUmemoryPool def = NULL, cur;
		struct cg_pool *p, *ptmp;
		pthread_mutex_lock(&model_mem_lock);
		HASH_ITER(hh, model_pools, p, ptmp)
		if (p->is_default && p->dev == dev) {
			def = p->h;
			break;
		}
		cur = model_cur_pool[dev].pool;
		o->alloc_nodes = model_dev_alloc[dev].nodes;
		o->alloc_bytes = model_dev_alloc[dev].bytes;
		pthread_mutex_unlock(&model_mem_lock);
		o->default_pool = (uintptr_t)def;
		o->has_default_pool = def != NULL;
		o->current_pool = (uintptr_t)cur;
		o->has_current_pool = cur != NULL;
		o->has_alloc_nodes = o->has_alloc_bytes = 1;
	}
	return 1;
}

/* Graph memory per device. e: the exec whose first launch took the sample
 * (the app's handle): one record per device its allocation nodes allocate
 * on (the instantiating context's device when it has none), whatever
 * context launched it (launch_dev names that one when it differs). NULL
 * (exit): one record per device the process was seen using. */
int model_graphmem_sample(const char *when, CUgraphExec e, struct ev_graphmem out[CG_MAX_DEV])
{
	int n = 0;
	unsigned mask = 0;
	int exec_dev = 0, launch_dev = 0;
	unsigned long long by[CG_MAX_DEV] = {0};
	if (!cg_log_on(CG_L_INFO) || atomic_load(&cg_live_captures) || !real_cuDeviceGetGraphMemAttribute)
		return 0;
	launch_dev = cg_current_device();
	if (e) {
		struct cg_exec *x;
		pthread_mutex_lock(&model_gx_lock);
		x = model_exec_find_locked(e);
		if (x) {
			exec_dev = x->inst_dev;
			mask = x->devmask;
			for (int i = 0; i < x->n_mem; i++)
				if (!x->mem[i].is_free && x->mem[i].dev)
					by[CG_MNODE_DEV(&x->mem[i])] += x->mem[i].size;
		} else {
			exec_dev = launch_dev;
		}
		pthread_mutex_unlock(&model_gx_lock);
		if (!mask)
			mask = 1u << exec_dev;
	} else {
		mask = atomic_load_explicit(&devs_seen, memory_order_relaxed) | 1u << launch_dev;
	}
	for (int d = 0; d < CG_MAX_DEV; d++)
		if (mask & 1u << d)
			n += graphmem_dev(d, when, e, exec_dev, launch_dev, by[d], &out[n]);
	return n;
}

int cg_model_graphmem(const char *when, CUgraphExec e, struct ev_graphmem out[CG_MAX_DEV])
{
	return model_graphmem_sample(when, e, out);
}
