/*
 * shim/module.c -- one "module" record per loaded object that a call site
 * names: its path and its GNU build-id, so that `cgshim report` can
 * symbolise "MODULE+0xOFF" frames from the file on disk at report time and
 * tell when that file is no longer the one that ran (the build-ids differ).
 *
 * Called by site.c when a frame is turned into text, which happens only when
 * a record naming the site is written: never on the launch path, and at most
 * once per module (a small table of load bases). The build-id is read from
 * the PT_NOTE segments as mapped in memory: no file is opened.
 */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cgshim/record.h"
#include "hot.h"
#include "locks.h"
#include "log.h"
#include "module.h"

#define MODULE_MAX 512

static const void *module_seen[MODULE_MAX];
static unsigned module_n;

struct module_find {
	uintptr_t addr;
	char path[4096];
	char build_id[2 * 64 + 1];
	int found;
};

/* The GNU build-id note among this object's PT_NOTE segments, as hex. */
static void module_build_id(struct dl_phdr_info *info, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	out[0] = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
			if ((const char *)desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				size_t n = 0;
				for (unsigned k = 0; k < nh->n_descsz && n + 2 < cap; k++) {
					out[n++] = hex[desc[k] >> 4];
					out[n++] = hex[desc[k] & 15];
				}
				out[n] = 0;
				return;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* dl_iterate_phdr callback: the object with a PT_LOAD segment holding addr. */
static int module_match(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_find *f = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || f->addr < lo || f->addr >= lo + ph->p_memsz)
			continue;
		/* The main program has no name here: its path is /proc/self/exe
		 * (dladdr would give argv[0], perhaps relative). */
		if (info->dlpi_name && info->dlpi_name[0]) {
			strncpy(f->path, info->dlpi_name, sizeof f->path - 1);
		} else {
			ssize_t n = readlink("/proc/self/exe", f->path, sizeof f->path - 1);
			f->path[n > 0 ? n : 0] = 0;
		}
		module_build_id(info, f->build_id, sizeof f->build_id);
		f->found = 1;
		return 1;
	}
	return 0;
}

static void (*_Atomic module_writer)(const char *name, const char *path, const void *base, const char *build_id);

void cg_module_writer_set(void (*w)(const char *name, const char *path, const void *base, const char *build_id))
{
	atomic_store(&module_writer, w);
}

static _Atomic int module_forked CG_HOT_DATA;

void cg_module_after_fork_child(void)
{
	atomic_store_explicit(&module_forked, 1, memory_order_relaxed);
}

int cg_module_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	if (atomic_load_explicit(&module_forked, memory_order_relaxed))
		return -1;
	return dl_iterate_phdr(cb, arg);
}

void cg_module_note(const void *fbase, const char *name)
{
	struct module_find f;
	unsigned i;
	void (*w)(const char *, const char *, const void *, const char *) = atomic_load(&module_writer);

	if (!fbase || !w || !cg_log_on(CG_L_INFO))
		return;
	pthread_mutex_lock(&module_lock);
	for (i = 0; i < module_n; i++)
		if (module_seen[i] == fbase)
			break;
	if (i < module_n || module_n == MODULE_MAX) {
		pthread_mutex_unlock(&module_lock);
		return;
	}
	module_seen[module_n++] = fbase;
	pthread_mutex_unlock(&module_lock);

	memset(&f, 0, sizeof f);
	f.addr = (uintptr_t)fbase;
	/* cg_module_iterate: not in a forked child, where the loader's lock
	 * may be held for good (the module goes unnamed there) */
	if (cg_module_iterate(module_match, &f) < 0 || !f.found)
		return;
	w(name, f.path, fbase, f.build_id[0] ? f.build_id : NULL);
}
