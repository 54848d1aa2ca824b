/* shim/locks.c -- the shim's locks (locks.def) and their fork handling (locks.h). */
#include "locks.h"

#define CG_LOCK_INIT_mutex PTHREAD_MUTEX_INITIALIZER
#define CG_LOCK_INIT_rwlock PTHREAD_RWLOCK_INITIALIZER
#define CG_LOCK(kind, name, fork) pthread_##kind##_t name = CG_LOCK_INIT_##kind;
#include "locks.def"
#undef CG_LOCK

enum { KIND_mutex, KIND_rwlock };
enum { FORK_RESET, FORK_TAKE };
static const struct {
	void *lock;
	unsigned char kind, take;
} locks[] = {
#define CG_LOCK(kind, name, fork) {&name, KIND_##kind, FORK_##fork},
#include "locks.def"
#undef CG_LOCK
};
#define N_LOCKS (int)(sizeof locks / sizeof locks[0])

void cg_locks_prepare(void)
{
	for (int i = 0; i < N_LOCKS; i++) {
		if (!locks[i].take)
			continue;
		if (locks[i].kind == KIND_mutex)
			pthread_mutex_lock(locks[i].lock);
		else
			pthread_rwlock_wrlock(locks[i].lock);
	}
}

void cg_locks_parent(void)
{
	for (int i = N_LOCKS - 1; i >= 0; i--) {
		if (!locks[i].take)
			continue;
		if (locks[i].kind == KIND_mutex)
			pthread_mutex_unlock(locks[i].lock);
		else
			pthread_rwlock_unlock(locks[i].lock);
	}
}

void cg_locks_child(void)
{
	for (int i = 0; i < N_LOCKS; i++) {
		if (locks[i].kind == KIND_mutex)
			pthread_mutex_init(locks[i].lock, NULL);
		else
			pthread_rwlock_init(locks[i].lock, NULL);
	}
}
