/* tests/unit/model-stubs.h -- the stand-ins' knobs (model-stubs.c). */
#ifndef CGSHIM_TEST_MODEL_STUBS_H
#define CGSHIM_TEST_MODEL_STUBS_H
extern int stub_degraded;
extern const char *stub_degrade_why;
extern int stub_table_fail;
extern long long stub_table_mallocs; /* cg_table_malloc calls so far */
#endif
