/* THREADS threads each emit PER_THREAD events (thread, seq) at once; the
 * guest test checks every one arrived exactly once.
 *   threads [THREADS [PER_THREAD]] */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "wait.h"

USERTRACE_EVENT(mt, USERTRACE_FIELD_U32(thread), USERTRACE_FIELD_U32(seq));
USERTRACE_PROVIDER(ctest, &mt);

static int per_thread = 5000;
static pthread_barrier_t start;
static int errors;

static void *emitter(void *arg) {
  uint32_t thread = (uint32_t)(uintptr_t)arg;
  pthread_barrier_wait(&start);
  for (int i = 0; i < per_thread; i++) {
    usertrace_value v[2];
    v[0] = usertrace_u32(thread);
    v[1] = usertrace_u32((uint32_t)i);
    if (usertrace_event_emit(&mt, v, 2) != USERTRACE_OK) __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  pthread_t tids[64];
  if (argc > 2) per_thread = atoi(argv[2]);
  REQUIRE(threads > 0 && threads <= 64);
  CHECK_RESULT(usertrace_provider_register(&ctest), USERTRACE_OK);
  REQUIRE(check_failures == 0);
  REQUIRE(wait_enabled(&mt.enabled, 60));
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (int t = 0; t < threads; t++) pthread_create(&tids[t], NULL, emitter, (void *)(uintptr_t)t);
  for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
  CHECK(errors == 0);
  return check_done("threads");
}
