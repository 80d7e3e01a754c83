/* c89_client.c: the public header, with its inline granularity test, compiles as strict C89
 * (-std=c89 -pedantic -Werror, see Makefile.am) and links. Run as a test: it must exit 0. */
#include "mrengine.h"

/* A scope's task and body, in C89. */
static void count_one(void *env) { *(int *)env += 1; }
static void spawn_one(MR_Scope *s, void *env) { (void)MR_scope_spawn(s, count_one, env); }

int main(void) {
  int rc, spark;
  MR_Config c;
  MR_Timer t = MR_TIMER_INIT;
  MR_Ticker tk;
  MR_Scope sc;
  int ran = 0;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.engines = 1;
  rc = MR_init(&c);
  if (rc != 0) return 1;
  spark = MR_par_cond_local_wsdeque_length(); /* empty deque: spark */
  if (MR_sleep_for(1000) != 0 || MR_ticker_start(&tk, 1000) != 0) return 1;
  if (MR_future_signal_at(NULL, 0, MR_now(), &t) != MR_EINVAL) return 1;
  if (MR_scope(spawn_one, &ran) != 0 || ran != 1) return 1;
  if (MR_scope_begin(&sc) != 0 || MR_scope_spawn(&sc, count_one, &ran) != 0) return 1;
  if (MR_scope_end(&sc) != 0 || ran != 2 || MR_scope_end(&sc) != MR_ECLOSED) return 1;
  rc = MR_shutdown();
  return rc == 0 && spark == 1 && MR_par_cond_local_wsdeque_length() == 0 ? 0 : 1;
}
