/* check_options.c: options from MR_Config and MRENGINE_OPTIONS; errors name the flag and value. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mrengine.h"
#include "testutil.h"

static int init_with_env(const char *env) {
  setenv("MRENGINE_OPTIONS", env, 1);
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  return MR_init(&c);
}

START_TEST(test_good_options_apply) {
  ck_assert_int_eq(init_with_env("-P 3 --spin-rounds 4 --stack-size=128 --small-stack-size 32 "
                                 "--poll-interval-us 500"),
                   0);
  ck_assert_int_eq(MR_num_engines(), 3);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("-P2"), 0);
  ck_assert_int_eq(MR_num_engines(), 2);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("-P1 --thread-pinning none"), 0);
  int cpu = 0;
  ck_assert_int_eq(MR_engine_cpu(0, &cpu), 0);
  ck_assert_int_eq(cpu, -1);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("-P1 --thread-pinning=pus"), 0);
  ck_assert_int_eq(MR_engine_cpu(0, &cpu), 0);
  ck_assert_int_ge(cpu, 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("-P1 --schedule=round-robin --level-slice-us 250"), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("-P1 --schedule highest-first"), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("  --engines=1\t"), 0);
  ck_assert_int_eq(MR_num_engines(), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  /* --trace writes its file (tests/check_trace checks what is in it). */
  char path[] = "/tmp/mrengine-options-XXXXXX.json";
  int fd = mkstemps(path, 5);
  ck_assert_int_ge(fd, 0);
  char env[96];
  snprintf(env, sizeof env, "-P2 --trace %s", path);
  ck_assert_int_eq(init_with_env(env), 0);
  ck_assert_int_eq(MR_trace_start("/tmp/x.json"), MR_EBUSY);
  ck_assert_int_eq(MR_shutdown(), 0);
  struct stat st;
  ck_assert_int_eq(fstat(fd, &st), 0);
  ck_assert_int_gt(st.st_size, 100);
  close(fd);
  unlink(path);
}
END_TEST

static const struct {
  const char *env;
  const char *must_mention[3];
} kBad[] = {
    {"-P 0", {"-P", "'0'"}},
    {"-P -1", {"-P", "'-1'"}},
    {"--engines 5000", {"--engines", "'5000'"}},
    {"-P two", {"-P", "'two'"}},
    {"-P", {"'-P'", "needs a value"}},
    {"--spin-rounds 1e3", {"spin-rounds", "'1e3'"}},
    {"--stack-size 4", {"stack-size", "'4'"}},
    {"--stack-size 99999999999999999999999", {"stack-size", "9999"}},
    {"--poll-interval-us 0", {"poll-interval-us", "'0'"}},
    {"--frobnicate 3", {"unknown option", "'--frobnicate'"}},
    {"-X", {"unknown option", "'-X'"}},
    {"-P 2 --small-stack-size=", {"small-stack-size", "''"}},
    {"--thread-pinning=numa", {"--thread-pinning", "'numa'", "none|cores|pus"}},
    {"--thread-pinning", {"'--thread-pinning'", "needs a value"}},
    {"--thread-pinning CORES", {"--thread-pinning", "'CORES'"}},
    {"--stats=yes", {"--stats", "takes no value", "'yes'"}},
    {"--max-backup-threads 5000", {"--max-backup-threads", "'5000'", "0 to 4096"}},
    {"--max-backup-threads=-1", {"--max-backup-threads", "'-1'"}},
    {"--lazy-engines=1", {"--lazy-engines", "takes no value", "'1'"}},
    {"--granularity-factor 1000001", {"--granularity-factor", "'1000001'"}},
    {"--lc-contexts-per-engine 0", {"--lc-contexts-per-engine", "'0'"}},
    {"--trace=run.txt", {"--trace", "'run.txt'", ".eventlog|.json"}},
    {"--trace .json", {"--trace", "'.json'"}},
    {"--trace=dir/.eventlog", {"--trace", "'dir/.eventlog'"}},
    {"--trace", {"'--trace'", "needs a value"}},
    {"--schedule=fair", {"--schedule", "'fair'", "highest-first|round-robin"}},
    {"--schedule", {"'--schedule'", "needs a value"}},
    {"--level-slice-us 0", {"--level-slice-us", "'0'"}},
    {"--level-slice-us=10000001", {"--level-slice-us", "'10000001'"}},
};

START_TEST(test_bad_option_fails_with_message) {
  int i = _i;
  int rc = init_with_env(kBad[i].env);
  ck_assert_msg(rc == MR_EOPTION, "'%s' gave %d", kBad[i].env, rc);
  const char *msg = MR_init_error_message();
  ck_assert_ptr_nonnull(strstr(msg, "MRENGINE_OPTIONS"));
  for (int k = 0; k < 3 && kBad[i].must_mention[k]; k++)
    ck_assert_msg(strstr(msg, kBad[i].must_mention[k]) != NULL, "'%s': message '%s' lacks '%s'",
                  kBad[i].env, msg, kBad[i].must_mention[k]);
  ck_assert_int_eq(MR_num_engines(), 0); /* nothing started */
}
END_TEST

START_TEST(test_bad_config_fields) {
  unsetenv("MRENGINE_OPTIONS");
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.engines = -2;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "engines"));
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.stack_size = 100;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.size = 3;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.options = "--spin-rounds x";
  ck_assert_int_eq(MR_init(&c), MR_EOPTION);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "MR_Config.options"));
  /* Fields are held to their options' ranges (doc/options.md): past them, MR_EINVAL naming the
   * field; at them, accepted. */
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.poll_interval_us = 4000000000u;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "poll_interval_us"));
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.spin_rounds = 2000000000;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "spin_rounds"));
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.spin_rounds = 1000001;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  c.poll_interval_us = 10000001;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET | MR_CONFIG_IGNORE_ENV;
  c.engines = 1;
  c.spin_rounds = 1000000;
  c.poll_interval_us = 10000000;
  ck_assert_int_eq(MR_init(&c), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  /* A flag bit mrengine.h does not define is refused, not ignored. */
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET | 0x80u;
  ck_assert_int_eq(MR_init(&c), MR_EINVAL);
  ck_assert_ptr_nonnull(strstr(MR_init_error_message(), "unknown bits 0x80"));
  ck_assert_int_eq(MR_num_engines(), 0);
}
END_TEST

/* An option given twice takes its last value (doc/options.md), inside one source as across the
 * MR_Config.options text and MRENGINE_OPTIONS. */
START_TEST(test_repeated_option_last_wins) {
  ck_assert_int_eq(init_with_env("--engines=2 --engines 3"), 0);
  ck_assert_int_eq(MR_num_engines(), 3);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(init_with_env("-P3 -P 1"), 0);
  ck_assert_int_eq(MR_num_engines(), 1);
  ck_assert_int_eq(MR_shutdown(), 0);
  setenv("MRENGINE_OPTIONS", "-P 2", 1);
  MR_Config c;
  MR_config_default(&c);
  c.options = "-P 1 -P 3";
  ck_assert_int_eq(MR_init(&c), 0);
  ck_assert_int_eq(MR_num_engines(), 2);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

START_TEST(test_env_overrides_config_and_can_be_ignored) {
  setenv("MRENGINE_OPTIONS", "-P 2", 1);
  MR_Config c;
  MR_config_default(&c);
  c.engines = 3;
  ck_assert_int_eq(MR_init(&c), 0);
  ck_assert_int_eq(MR_num_engines(), 2);
  ck_assert_int_eq(MR_shutdown(), 0);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  ck_assert_int_eq(MR_init(&c), 0);
  ck_assert_int_eq(MR_num_engines(), 3);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

START_TEST(test_lifecycle_errors) {
  unsetenv("MRENGINE_OPTIONS");
  ck_assert_int_eq(MR_shutdown(), MR_ENOTINIT);
  ck_assert_int_eq(MR_spawn(NULL, NULL, NULL), MR_ENOTINIT);
  ck_assert_int_eq(MR_init(NULL), 0);
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  ck_assert_int_eq(MR_init(&c), MR_EBUSY);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(MR_num_engines(), 0);
}
END_TEST

START_TEST(test_error_table) {
  ck_assert_str_eq(MR_err_name(MR_EOPTION), "MR_EOPTION");
  ck_assert_str_eq(MR_err_name(-1000), "MR_EUNKNOWN");
  ck_assert_str_eq(MR_strerror(MR_ENOTINIT), "the runtime is not initialised");
  ck_assert_str_eq(MR_strerror(12345), "unknown error");
  for (int e = -1; e > MR_ERRNO_END_; e--) {
    ck_assert_str_ne(MR_strerror(e), "unknown error");
    ck_assert_str_ne(MR_err_name(e), "MR_EUNKNOWN");
  }
  /* The table ends just above MR_ERRNO_END_, with the collectors' code last. */
  ck_assert_str_eq(MR_err_name(MR_ERRNO_END_), "MR_EUNKNOWN");
  ck_assert_int_eq(MR_ENOTSUP, MR_ERRNO_END_ + 1);
  ck_assert_str_eq(MR_err_name(MR_ENOTSUP), "MR_ENOTSUP");
  ck_assert_str_eq(MR_err_name(MR_EDEADLK), "MR_EDEADLK");
  ck_assert_str_eq(MR_err_name(MR_EDROPPED), "MR_EDROPPED");
  ck_assert_str_eq(MR_err_name(MR_ECLOSED), "MR_ECLOSED");
  ck_assert_str_eq(MR_strerror(MR_ECLOSED),
                   "closed: the scope has ended, or the channel is closed");
}
END_TEST

int main(void) {
  Suite *s = suite_create("options");
  TCase *tc = mr_tcase("options", 30);
  tcase_add_test(tc, test_good_options_apply);
  tcase_add_loop_test(tc, test_bad_option_fails_with_message, 0,
                      (int)(sizeof kBad / sizeof kBad[0]));
  tcase_add_test(tc, test_bad_config_fields);
  tcase_add_test(tc, test_repeated_option_last_wins);
  tcase_add_test(tc, test_env_overrides_config_and_can_be_ignored);
  tcase_add_test(tc, test_lifecycle_errors);
  tcase_add_test(tc, test_error_table);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
