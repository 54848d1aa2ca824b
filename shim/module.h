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

#endif
