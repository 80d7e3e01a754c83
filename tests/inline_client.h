/* inline_client.h: the shared-library client of tests/check_inline.c. */
#ifndef MR_INLINE_CLIENT_H
#define MR_INLINE_CLIENT_H

/* fib(n) through the inline fork and join: per call, fib(n-1) | fib(n-2), then fib(n-2) again
 * (checked) | nothing; -1 if a check failed. */
long inline_client_fib(int n);

/* In the calling context (not bound to an engine; 2 engines): fork a branch, wait until the other
 * engine steals it (at most 10 s), then join, which the stolen branch makes wait until the parent
 * has suspended, so the frame resumes on the thief's engine; then fork and join fib(10) | fib(9)
 * in that frame. -1 if the branch was not stolen or a sum is wrong; else 1 if the frame resumed on
 * another engine at the first join, 0 if not. Joins: 2 + those of fib(10) and fib(9). */
int inline_client_move(void);

/* Called by inline_client_fib and inline_client_move after each join with the engine before the fork, the engine after
 * the join (MR_engine_id), and the engine the inline fork and join of that same frame see there
 * (MR_view_now_): defined by the test program. */
void inline_client_note(int before, int after, int view);

#endif
