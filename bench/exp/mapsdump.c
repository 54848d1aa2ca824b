/* bench/exp/mapsdump.c -- FOR MEASURING ONLY: preloaded beside the shim
 * under valgrind, writes the process's mappings of libcgshim.so to
 * $CGX_MAPS at exit (bench/exp/pf-lines.py needs the load address). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((destructor)) static void cgx_maps_dump(void)
{
	const char *out = getenv("CGX_MAPS");
	char line[512];
	FILE *in, *o;
	if (!out || !(in = fopen("/proc/self/maps", "r")))
		return;
	if (!(o = fopen(out, "w"))) {
		fclose(in);
		return;
	}
	while (fgets(line, sizeof line, in))
		if (strstr(line, "libcgshim.so"))
			fputs(line, o);
	fclose(o);
	fclose(in);
}
