/* A minimal test harness shared by every test program.
 *
 * A test program is a set of cases. Each case prints "ok NAME" or
 * "not ok NAME: file:line: what failed"; test/run-tests.sh counts those lines.
 * A program that crashes or exits non-zero without a "not ok" line counts as
 * one failure. CHECK_ONLY=name[,name...] runs only the cases named (a
 * case is skipped silently), for working on one. */
#ifndef AQUILA_TEST_CHECK_H
#define AQUILA_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_case_failed;
static int check_failures;

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);                           \
      check_case_failed = 1;                                                                      \
    }                                                                                             \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                        \
  do {                                                                                            \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                               \
    if (check_a_ != check_b_) {                                                                   \
      printf("  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, check_a_, #b,  \
             check_b_);                                                                           \
      check_case_failed = 1;                                                                      \
    }                                                                                             \
  } while (0)

/* Stops the current case when the condition fails (later steps need it). */
#define REQUIRE(cond)                                                                             \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      printf("  %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond);                         \
      check_case_failed = 1;                                                                      \
      return;                                                                                     \
    }                                                                                             \
  } while (0)

#define RUN(fn)                                                                                    \
  do {                                                                                             \
    const char *check_only = getenv("CHECK_ONLY");                                                 \
    if (check_only && !strstr(check_only, #fn)) break;                                             \
    check_case_failed = 0;                                                                         \
    fflush(stdout);                                                                                \
    fn();                                                                                          \
    if (check_case_failed) {                                                                       \
      printf("not ok %s\n", #fn);                                                                  \
      check_failures++;                                                                            \
    } else {                                                                                       \
      printf("ok %s\n", #fn);                                                                      \
    }                                                                                              \
    fflush(stdout);                                                                                \
  } while (0)

#define CHECK_EXIT() return check_failures ? 1 : 0

#endif
