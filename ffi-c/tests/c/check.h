/* Tiny test helpers: every failed CHECK prints where and why, and the
 * program exits 1 at the end (or at once with REQUIRE). */
#ifndef USERTRACE_TEST_CHECK_H
#define USERTRACE_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <usertrace.h>

static int check_failures;

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
      check_failures++;                                                           \
    }                                                                             \
  } while (0)

#define CHECK_RESULT(expr, expected)                                                            \
  do {                                                                                          \
    usertrace_result r_ = (expr);                                                               \
    if (r_ != (expected)) {                                                                     \
      char m_[512];                                                                             \
      usertrace_last_error(m_, sizeof m_, NULL);                                                \
      fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d; last error: %s\n", __FILE__,    \
              __LINE__, #expr, (int)r_, usertrace_error_string(r_), (int)(expected), m_);       \
      check_failures++;                                                                         \
    }                                                                                           \
  } while (0)

#define REQUIRE(cond)                                                             \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

static inline int check_done(const char *name) {
  if (check_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
    return 1;
  }
  return 0;
}

/* Whether registrations succeed in this process: through shared memory
 * always (in /dev/shm), through user_events where the kernel's is usable.
 * usertrace_transport applies USERTRACE_TRANSPORT's rule; usertrace_status
 * alone says only whether user_events is usable. */
static inline int registrations_succeed(void) {
  usertrace_transport_kind transport = USERTRACE_TRANSPORT_USER_EVENTS;
  if (usertrace_transport(&transport, NULL, 0, NULL) != USERTRACE_OK) return 0;
  return transport == USERTRACE_TRANSPORT_SHM || usertrace_status(NULL, 0, NULL) == USERTRACE_AVAILABLE;
}
#endif
