/* Threads emit an enabled event without pause while the main thread
 * releases and re-registers its provider, then returns from main while
 * they are still emitting: exit runs the provider's destructor under them.
 * Every emit must return USERTRACE_OK, nothing may crash or hang, and ASan
 * must see no use after free. (The window it guards is a few instructions
 * wide: against the library before the fix, 3 runs of 3000 rounds in the
 * guest did not hit it. The mechanism's own test, core/src/producer/in_flight.rs, widens the
 * window and does fail without the wait.)
 *   release_while_emitting [ROUNDS] */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "wait.h"

USERTRACE_EVENT(churn, USERTRACE_FIELD_U32(thread), USERTRACE_FIELD_STR(note));
USERTRACE_PROVIDER(ctest_rel, &churn);

#define THREADS 4
static unsigned long emitted[THREADS];
static int errors;

static void *emitter(void *arg) {
  uint32_t thread = (uint32_t)(uintptr_t)arg;
  for (;;) {
    usertrace_value v[2];
    v[0] = usertrace_u32(thread);
    v[1] = usertrace_str("racing the release");
    /* Registered or released, an emit either writes or does nothing. */
    if (usertrace_event_emit(&churn, v, 2) != USERTRACE_OK) __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&emitted[thread], 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void set_ftrace(int on) {
  int fd = open("/sys/kernel/tracing/events/user_events/ctest_rel_churn/enable", O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, on ? "1" : "0", 1) == 1);
  close(fd);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  /* Keeps the event alive while the provider is released, so ftrace's
   * enable stays and every re-registration comes back enabled. */
  const usertrace_field f[] = {USERTRACE_FIELD_U32(thread), USERTRACE_FIELD_STR(note)};
  usertrace_tracepoint *keeper = NULL;
  CHECK_RESULT(usertrace_tracepoint_new("ctest_rel_churn", f, 2, 0, &keeper), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_register(keeper), USERTRACE_OK);
  CHECK_RESULT(usertrace_provider_register(&ctest_rel), USERTRACE_OK);
  REQUIRE(check_failures == 0);
  set_ftrace(1);
  REQUIRE(wait_enabled(&churn.enabled, 60));

  pthread_t tids[THREADS];
  for (int t = 0; t < THREADS; t++) pthread_create(&tids[t], NULL, emitter, (void *)(uintptr_t)t);
  for (int r = 0; r < rounds; r++) {
    CHECK_RESULT(usertrace_provider_release(&ctest_rel), USERTRACE_OK);
    CHECK_RESULT(usertrace_provider_register(&ctest_rel), USERTRACE_OK);
  }
  unsigned long total = 0;
  for (int t = 0; t < THREADS; t++) total += __atomic_load_n(&emitted[t], __ATOMIC_RELAXED);
  fprintf(stderr, "release_while_emitting: %d release/register rounds under %lu emits\n", rounds, total);
  CHECK(total > 0);
  CHECK(__atomic_load_n(&errors, __ATOMIC_RELAXED) == 0);
  set_ftrace(0);
  usertrace_tracepoint_free(keeper); /* the emitters never use it */
  /* Return with the emitters still running: exit runs the destructor. */
  return check_done("release_while_emitting");
}
