/* tools/launch.h -- run a command with libcgshim.so preloaded. */
#ifndef CGSHIM_TOOLS_LAUNCH_H
#define CGSHIM_TOOLS_LAUNCH_H

/*
 * Path of libcgshim.so: $CGSHIM_LIB, else BUILD/shim/libcgshim.so when this
 * executable is BUILD/tools/cgshim, else CGSHIM_LIBDIR/libcgshim.so.
 * Returns a malloc'd string.
 */
char *launch_find_lib(void);

/* Prepend lib to $LD_PRELOAD (kept as given). 0 or -1 (ENOMEM). */
int launch_preload(const char *lib);

/*
 * fork + execvp argv, forwarding SIGINT/SIGTERM/SIGHUP/SIGQUIT to the child.
 * Returns what a shell would: the child's exit status, 128+signal if it was
 * killed, 127 if the command was not found, 126 if it could not be executed.
 */
int launch_run(char **argv);

#endif
