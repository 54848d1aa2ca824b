/* shim/module.h -- "module" records (path, build-id) for call-site modules. */
#ifndef CGSHIM_MODULE_H
#define CGSHIM_MODULE_H

/* Hand the module record of the object loaded at fbase (dladdr's
 * dli_fbase; name: the file name frames show) to its writer unless it was
 * handed already. */
void cg_module_note(const void *fbase, const char *name);
/* The writer of module records (its facts: records.def's module fields;
 * build_id NULL: none), set by the hook wing at start-up (hooks/wire.c:
 * emit_module); none are noted before. */
void cg_module_writer_set(void (*w)(const char *name, const char *path, const void *base, const char *build_id));

struct dl_phdr_info;
/* dl_iterate_phdr(cb, arg), or -1 without calling it in a forked child:
 * there the loader's list lock, which it takes, stays held for good when
 * another thread of the parent held it at the fork (glibc resets only the
 * lock dlopen takes), and the child would block on it
 * (tests/integration harm-fork_loader). */
int cg_module_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
/* In a forked child (init.c's fork handler): cg_module_iterate answers -1
 * from then on. */
void cg_module_after_fork_child(void);

#endif
