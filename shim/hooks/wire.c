/*
 * shim/hooks/wire.c -- the door's wiring: start-up (init.c) calls cgh_wire
 * first, handed to it by the door that starts the shim (cg_ensure_init).
 * It gives the rooms below the hook wing the writers of the records they
 * owe and cannot return to a hook: the model's capture records, the
 * shim's own warnings (cg_warn, from any room) and the module records of
 * the sites being rendered. Each writer hands its facts to emit_*; the
 * rooms below start no record and call nothing above them.
 */
#include "hooks.h"
#include "../module.h"

static void wire_warning(const char *msg)
{
	emit_warning(CG_L_WARN, &(struct ev_warning){.msg = msg});
}

static void wire_module(const char *name, const char *path, const void *base, const char *build_id)
{
	emit_module(CG_L_INFO,
		    &(struct ev_module){
			.name = name, .path = path, .base = (unsigned long long)(uintptr_t)base, .build_id = build_id});
}

void cgh_wire(void)
{
	cg_warn_writer_set(wire_warning);
	cg_module_writer_set(wire_module);
	cgh_capture_records_init();
}
