/*
 * tools/report-dot.h -- what the pictures of `cgshim report --dot` share:
 * report-dot.c (one graph, or every graph at a handle) and
 * report-dot-update.c (both sides of a failing update, aligned).
 */
#ifndef CGSHIM_TOOLS_REPORT_DOT_H
#define CGSHIM_TOOLS_REPORT_DOT_H

#include "report.h"

/* A DOT string literal body: quotes and backslashes escaped, newlines as \n. */
void rp_dot_esc(FILE *f, const char *s);
/* type is a memory node's (mem_alloc, mem_free). */
int rp_dot_is_mem(const char *type);
/* What a node does, under its type in a label: a kernel's short name, grid
 * and block; a copy's kind and size; a memset's size. */
void rp_dot_node_detail(FILE *f, const json_t *nd);
/* Write the picture with write(f, arg) to out (stdout when NULL) in the
 * type its extension names, through `dot -T<ext>` for a rendered type.
 * 0, or an exit status. */
int rp_dot_output(const char *out, void (*write)(FILE *, void *), void *arg);
/* --dot update:N / update:last (report-dot-update.c). */
int rp_dot_update(const struct rp_log *log, const char *which, const char *out);

#endif
