/*
 * bench/exp/nolock.h -- FOR MEASURING ONLY, never for use: forced into every
 * shim source by bench/exp/build.sh (-include) to build a single-threaded
 * library whose mutexes are no-ops (and, with -DXNOATOMIC, whose locked
 * read-modify-writes are plain loads and stores), so that bench/run.py
 * --before can say what the serialising instructions cost a capture cycle
 * (docs/measurements.md, nineteenth session). Only for a workload of one
 * thread: any other use races.
 */
#ifndef __ASSEMBLER__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
static inline int cg_x_nolock(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}
#define pthread_mutex_lock cg_x_nolock
#define pthread_mutex_unlock cg_x_nolock
#define pthread_mutex_trylock cg_x_nolock
#ifdef XNOATOMIC
#define CGX_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CGX_RMW(p, op, v)                                                                                              \
	({                                                                                                             \
		__typeof__(p) _p = (p);                                                                                \
		__typeof__(CGX_LOAD(_p)) _o = CGX_LOAD(_p);                                                            \
		__atomic_store_n(_p, _o op(v), __ATOMIC_RELAXED);                                                      \
		_o;                                                                                                    \
	})
#undef atomic_fetch_add
#undef atomic_fetch_add_explicit
#undef atomic_fetch_sub
#undef atomic_fetch_sub_explicit
#undef atomic_exchange
#undef atomic_exchange_explicit
#undef atomic_compare_exchange_strong
#undef atomic_compare_exchange_strong_explicit
#undef atomic_compare_exchange_weak
#define atomic_fetch_add(p, v) CGX_RMW(p, +, v)
#define atomic_fetch_add_explicit(p, v, o) CGX_RMW(p, +, v)
#define atomic_fetch_sub(p, v) CGX_RMW(p, -, v)
#define atomic_fetch_sub_explicit(p, v, o) CGX_RMW(p, -, v)
#define atomic_exchange(p, v)                                                                                          \
	({                                                                                                             \
		__typeof__(p) _p = (p);                                                                                \
		__typeof__(CGX_LOAD(_p)) _o = CGX_LOAD(_p);                                                            \
		__atomic_store_n(_p, (v), __ATOMIC_RELAXED);                                                           \
		_o;                                                                                                    \
	})
#define atomic_exchange_explicit(p, v, o) atomic_exchange(p, v)
#define atomic_compare_exchange_strong(p, e, v)                                                                        \
	({                                                                                                             \
		__typeof__(p) _p = (p);                                                                                \
		__typeof__(e) _e = (e);                                                                                \
		__typeof__(CGX_LOAD(_p)) _o = CGX_LOAD(_p);                                                            \
		int _ok = _o == *_e;                                                                                   \
		if (_ok)                                                                                               \
			__atomic_store_n(_p, (v), __ATOMIC_RELAXED);                                                   \
		else                                                                                                   \
			*_e = _o;                                                                                      \
		_ok;                                                                                                   \
	})
#define atomic_compare_exchange_strong_explicit(p, e, v, a, b) atomic_compare_exchange_strong(p, e, v)
#define atomic_compare_exchange_weak(p, e, v) atomic_compare_exchange_strong(p, e, v)
#endif
#endif
