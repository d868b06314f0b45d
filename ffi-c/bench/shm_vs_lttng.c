/* usertrace's shared-memory transport against LTTng-UST, natively, each
 * with its recorder live: `usertrace record` reading usertrace's rings, an
 * LTTng session's consumer daemon reading LTTng's buffers. Driven by
 * run-shm-vs-lttng.sh, which starts the recorders, sizes the buffers and
 * counts what each lost.
 *
 *   shm_vs_lttng cost ROUNDS
 *       the per-event cost: each round, one burst of BURST events through
 *       usertrace and one through LTTng, PERIOD_US / 2 apart (which goes
 *       first alternates: each one's bursts come every PERIOD_US), each
 *       burst timed alone; prints each one's median ns/event over the
 *       rounds. Waits for both events to be enabled before it starts.
 *   shm_vs_lttng paced usertrace|lttng RATE SECONDS THREADS
 *       RATE events/s in all, THREADS threads each emitting its share in
 *       a burst every millisecond, for SECONDS; prints the rate reached.
 *   shm_vs_lttng burst usertrace|lttng SIZE THREADS
 *       THREADS threads each emitting SIZE events back to back, at once.
 *
 * Every mode waits (60 s at most) for its events to be enabled, then
 * prints `emitted N` with the events it emitted. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <usertrace.h>

#include "bench_tp.h"

#define BURST 1000
#define PERIOD_US 5000

USERTRACE_EVENT(ev4, USERTRACE_FIELD_U32(v));
USERTRACE_PROVIDER(shmlt, &ev4); /* shmlt_ev4 */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t) {
  struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static int usertrace_on(void) { return USERTRACE_ENABLED(ev4); }
static int lttng_on(void) { return lttng_ust_tracepoint_enabled(usertrace_bench, ev) != 0; }

static void wait_for(const char *what, int (*ready)(void)) {
  for (int i = 0; i < 6000 && !ready(); i++) usleep(10000);
  if (!ready()) {
    fprintf(stderr, "shm_vs_lttng: %s was not enabled within 60 s\n", what);
    exit(3);
  }
}

/* Inlined into each loop, as the macros are where they are used. */
static inline __attribute__((always_inline)) void emit_usertrace(uint32_t i) { USERTRACE_EMIT(ev4, usertrace_u32(i)); }
static inline __attribute__((always_inline)) void emit_lttng(uint32_t i) { lttng_ust_tracepoint(usertrace_bench, ev, i); }

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp);
  return v[n / 2];
}

static void cost(int rounds) {
  wait_for("the usertrace event", usertrace_on);
  wait_for("the LTTng event", lttng_on);
  usleep(200000);
  double *ut = calloc((size_t)rounds, sizeof(double)), *lt = calloc((size_t)rounds, sizeof(double));
  uint64_t next = now_ns();
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      int lttng = k ^ (r & 1);
      next += PERIOD_US * 1000u / 2;
      sleep_until(next);
      uint64_t t0 = now_ns();
      if (lttng)
        for (uint32_t i = 0; i < BURST; i++) emit_lttng(i);
      else
        for (uint32_t i = 0; i < BURST; i++) emit_usertrace(i);
      double per = (double)(now_ns() - t0) / BURST;
      (lttng ? lt : ut)[r] = per;
    }
  }
  printf("usertrace_median_ns %.1f\nlttng_median_ns %.1f\nemitted %d\n", median(ut, rounds), median(lt, rounds), rounds * BURST);
}

struct job {
  int lttng;
  uint64_t per_ms; /* paced: events per millisecond; burst: 0 */
  uint64_t seconds, size;
  uint64_t emitted;
  pthread_barrier_t *start;
};

static void *run_job(void *arg) {
  struct job *j = arg;
  pthread_barrier_wait(j->start);
  if (j->per_ms == 0) {
    for (uint64_t i = 0; i < j->size; i++) j->lttng ? emit_lttng((uint32_t)i) : emit_usertrace((uint32_t)i);
    j->emitted = j->size;
    return NULL;
  }
  uint64_t start = now_ns(), next = start;
  for (uint64_t ms = 0; ms < j->seconds * 1000; ms++) {
    for (uint64_t i = 0; i < j->per_ms; i++) j->lttng ? emit_lttng((uint32_t)i) : emit_usertrace((uint32_t)i);
    j->emitted += j->per_ms;
    next += 1000000u;
    /* Behind (the rate is more than this thread can do): no sleep, so the
     * rate reached says so. */
    if (now_ns() < next) sleep_until(next);
  }
  j->seconds = now_ns() - start; /* ns taken, for the rate reached */
  return NULL;
}

static void threads(int lttng, uint64_t per_ms, uint64_t seconds, uint64_t size, int n) {
  wait_for(lttng ? "the LTTng event" : "the usertrace event", lttng ? lttng_on : usertrace_on);
  usleep(200000);
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)n);
  pthread_t t[64];
  struct job jobs[64];
  for (int i = 0; i < n; i++) {
    jobs[i] = (struct job){lttng, per_ms, seconds, size, 0, &start};
    pthread_create(&t[i], NULL, run_job, &jobs[i]);
  }
  uint64_t emitted = 0, slowest = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(t[i], NULL);
    emitted += jobs[i].emitted;
    if (jobs[i].seconds > slowest) slowest = jobs[i].seconds;
  }
  if (per_ms) printf("rate_reached %.0f\n", (double)emitted * 1e9 / (double)slowest);
  printf("emitted %llu\n", (unsigned long long)emitted);
  /* Time for the recorders to read the last of it while we still exist. */
  usleep(300000);
}

int main(int argc, char **argv) {
  if (usertrace_provider_register(&shmlt) != USERTRACE_OK) {
    char m[512];
    usertrace_last_error(m, sizeof m, NULL);
    fprintf(stderr, "shm_vs_lttng: cannot register: %s\n", m);
    return 1;
  }
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  if (argc == 3 && strcmp(argv[1], "cost") == 0) {
    cost(atoi(argv[2]));
  } else if (argc == 6 && strcmp(argv[1], "paced") == 0 && atoi(argv[5]) > 0 && atoi(argv[5]) <= 64) {
    int n = atoi(argv[5]);
    uint64_t rate = strtoull(argv[3], NULL, 10);
    uint64_t per_ms = rate / 1000 / (uint64_t)n;
    threads(strcmp(argv[2], "lttng") == 0, per_ms ? per_ms : 1, strtoull(argv[4], NULL, 10), 0, n);
  } else if (argc == 5 && strcmp(argv[1], "burst") == 0 && atoi(argv[4]) > 0 && atoi(argv[4]) <= 64) {
    threads(strcmp(argv[2], "lttng") == 0, 0, 0, strtoull(argv[3], NULL, 10), atoi(argv[4]));
  } else {
    fprintf(stderr, "usage: see the comment at the top of shm_vs_lttng.c\n");
    return 2;
  }
  return 0;
}
