/* shim/module.h -- "module" records (path, build-id) for call-site modules. */
#ifndef CGSHIM_MODULE_H
#define CGSHIM_MODULE_H

/* Write the module record of the object loaded at fbase (dladdr's
 * dli_fbase; name: the file name frames show) unless already written. */
void cg_module_note(const void *fbase, const char *name);

#endif
