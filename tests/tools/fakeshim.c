/* tests/tools/fakeshim.c -- a preloadable library that does nothing, so the
 * launcher's own tests do not depend on libcgshim.so. */
int cgshim_tools_fakeshim_marker;
