/* testutil.h: what every Check suite of mrengine shares. */
#ifndef MR_TESTUTIL_H
#define MR_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* Run one suite in fork mode (unless CK_FORK=no, for gdb/valgrind) and return the exit status. */
static inline int mr_test_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* A test case with a timeout (seconds), so that a deadlock fails instead of hanging. */
static inline TCase *mr_tcase(const char *name, double timeout) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, timeout);
  return tc;
}

#endif
