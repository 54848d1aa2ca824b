/*
 * tools/report-input.c -- where the report's lines come from: a plain file
 * as it is; `-` (standard input) and gzip files (by their magic bytes, so a
 * .jsonl.gz and a renamed one alike) decompressed into an unlinked
 * temporary file first, because the report reads records again by offset
 * (rp_j) and keeps no line in memory. Progress lines on stderr when it is a
 * terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "report.h"

/* Progress: at most ten lines a second, only to a terminal; done < 0 ends
 * the line. */
void rp_progress(const char *what, long long done, long long total)
{
	static int tty = -1;
	static struct timespec last;
	struct timespec now;

	if (tty < 0)
		tty = isatty(2);
	if (!tty)
		return;
	if (done < 0) {
		fputs("\r\033[K", stderr);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - last.tv_sec) * 1000000000LL + (now.tv_nsec - last.tv_nsec) < 100000000LL)
		return;
	last = now;
	if (total > 0)
		fprintf(stderr, "\r\033[Kcgshim report: %s %.0f%% (%lld MB of %lld MB)", what,
			100.0 * (double)done / (double)total, done >> 20, total >> 20);
	else
		fprintf(stderr, "\r\033[Kcgshim report: %s %lld", what, done);
}

/* Decompress (or copy) gz into an unlinked temporary file; its fd or -1. */
static int rp_spool(gzFile gz, const char *name)
{
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096], buf[1 << 16];
	long long total = 0;
	int fd, n;

	snprintf(path, sizeof path, "%s/cgshim-report-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "cgshim report: %s: cannot make a temporary file in %s: %s\n", name, dir,
			strerror(errno));
		gzclose(gz);
		return -1;
	}
	unlink(path);
	while ((n = gzread(gz, buf, sizeof buf)) > 0) {
		if (write(fd, buf, (size_t)n) != n) {
			fprintf(stderr, "cgshim report: %s: writing the temporary copy: %s\n", name, strerror(errno));
			close(fd);
			gzclose(gz);
			return -1;
		}
		total += n;
		rp_progress("decompressing", total, 0);
	}
	if (n < 0) {
		int e;
		const char *msg = gzerror(gz, &e);
		/* the lines before the damage are read */
		fprintf(stderr, "cgshim report: %s: %s (reading what came before)\n", name,
			e == Z_ERRNO ? strerror(errno) : msg);
	}
	rp_progress(NULL, -1, 0);
	gzclose(gz);
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int rp_input_open(const char *path)
{
	unsigned char magic[2];
	gzFile gz;
	int fd;

	if (!strcmp(path, "-")) {
		fd = dup(0);
		if (fd < 0 || !(gz = gzdopen(fd, "rb"))) {
			fprintf(stderr, "cgshim report: standard input: %s\n", strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		return rp_spool(gz, "standard input"); /* plain text passes through gzread */
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cgshim report: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (pread(fd, magic, 2, 0) != 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		return fd;
	if (!(gz = gzdopen(fd, "rb"))) {
		close(fd);
		return -1;
	}
	return rp_spool(gz, path);
}
