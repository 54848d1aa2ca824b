/*
 * shim/config-values.h -- how a CGSHIM_* value is read, for the shim
 * (config.c) and the launcher (tools/options.c), so that the launcher
 * refuses exactly what the shim would replace by its default. Header-only:
 * the launcher links no shim code.
 */
#ifndef CGSHIM_CONFIG_VALUES_H
#define CGSHIM_CONFIG_VALUES_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* 1/0, or -1 when malformed. */
static inline int cg_value_bool(const char *s)
{
	static const char *yes[] = {"1", "yes", "true", "on"}, *no[] = {"0", "no", "false", "off"};
	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return 1;
		if (!strcasecmp(s, no[i]))
			return 0;
	}
	return -1;
}

/* Whole-string decimal within the "lo..hi" of choices (unbounded when
 * empty): rejects "", "10x", overflow. 0 and *out, or -1. */
static inline int cg_value_long(const char *s, const char *choices, long *out)
{
	long lo = LONG_MIN, hi = LONG_MAX, v;
	char *end;
	if (choices && *choices)
		sscanf(choices, "%ld..%ld", &lo, &hi);
	if (!*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Index of s among "a|b|c" choices (case-insensitive), or -1. */
static inline int cg_value_enum(const char *s, const char *choices)
{
	int idx = 0;
	size_t len = strlen(s);
	const char *p = choices;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && !strncasecmp(p, s, n))
			return idx;
		idx++;
		p += n + (bar ? 1 : 0);
	}
	return -1;
}

#endif
