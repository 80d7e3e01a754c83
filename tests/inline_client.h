/* inline_client.h: the shared-library client of tests/check_inline.c. */
#ifndef MR_INLINE_CLIENT_H
#define MR_INLINE_CLIENT_H

/* fib(n) through the inline fork and join: per call, fib(n-1) | fib(n-2), then fib(n-2) again
 * (checked) | nothing; -1 if a check failed. */
long inline_client_fib(int n);

/* Called by inline_client_fib after each join with the engine before the fork, the engine after
 * the join (MR_engine_id), and the engine the inline fork and join of that same frame see there
 * (MR_view_now_): defined by the test program. */
void inline_client_note(int before, int after, int view);

#endif
