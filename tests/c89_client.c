/* c89_client.c: the public header, with its inline granularity test, compiles as strict C89
 * (-std=c89 -pedantic -Werror, see Makefile.am) and links. Run as a test: it must exit 0. */
#include "mrengine.h"

int main(void) {
  int rc, spark;
  MR_Config c;
  MR_Timer t = MR_TIMER_INIT;
  MR_Ticker tk;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.engines = 1;
  rc = MR_init(&c);
  if (rc != 0) return 1;
  spark = MR_par_cond_local_wsdeque_length(); /* empty deque: spark */
  if (MR_sleep_for(1000) != 0 || MR_ticker_start(&tk, 1000) != 0) return 1;
  if (MR_future_signal_at(NULL, 0, MR_now(), &t) != MR_EINVAL) return 1;
  rc = MR_shutdown();
  return rc == 0 && spark == 1 && MR_par_cond_local_wsdeque_length() == 0 ? 0 : 1;
}
