/* Waiting for a tracer, for the guest tests. */
#ifndef USERTRACE_TEST_WAIT_H
#define USERTRACE_TEST_WAIT_H
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* Polls `word` every 10 ms for up to `seconds`; returns whether it is set. */
static int wait_enabled(const uint32_t *word, int seconds) {
  for (int i = 0; i < seconds * 100; i++) {
    if (__atomic_load_n(word, __ATOMIC_RELAXED)) return 1;
    sleep_ms(10);
  }
  return 0;
}
#endif
