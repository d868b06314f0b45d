/* Per-event cost of a 4-byte event, 20,000 iterations per row, each event
 * timed alone with CLOCK_MONOTONIC_RAW (the guest has no cycle counters).
 * Disabled rows run first; then the program writes $BENCH_DIR/disabled-done
 * and waits for every mechanism to be enabled by run-bench.sh (ftrace for
 * the USDT uprobe, the raw user_event and usertrace; an LTTng session),
 * then runs the enabled rows. One process, all rows in one run. The span
 * rows (a span with one 4-byte field, begun and ended) sit beside the
 * 4-byte event's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <usertrace.h>

#include "bench_tp.h"

#define ITER 20000

/* The USDT semaphore: the kernel increments it while the uprobe is on. */
unsigned short usertrace_bench_probe4_semaphore __attribute__((unused, section(".probes")));

USERTRACE_EVENT(ev4, USERTRACE_FIELD_U32(v));
/* The second event of the "two disabled checks" baseline of the span rows. */
USERTRACE_EVENT(ev4b, USERTRACE_FIELD_U32(v));
/* A span with the same 4-byte field: begin writes the id and it, end the id. */
USERTRACE_SPAN(span4, USERTRACE_FIELD_U32(v));
USERTRACE_PROVIDER(bench, &ev4, &ev4b, &span4); /* bench_ev4, bench_ev4b, bench_span4, bench_span_end */

/* Inlined, as the macros are where they are used. */
static inline __attribute__((always_inline)) void span_begin_end(uint32_t i) {
  uint64_t id = USERTRACE_SPAN_BEGIN(span4, usertrace_u32(i));
  USERTRACE_SPAN_END(bench, id);
}

static inline __attribute__((always_inline)) void span_scoped(uint32_t i) {
  USERTRACE_SPAN_SCOPED(bench, span4, usertrace_u32(i));
}

/* The raw row: a hand-written user_events registration. */
struct user_reg {
  uint32_t size;
  uint8_t enable_bit, enable_size;
  uint16_t flags;
  uint64_t enable_addr, name_args;
  uint32_t write_index;
} __attribute__((packed));
static uint32_t raw_word __attribute__((aligned(8)));
static int raw_fd;
static uint32_t raw_index;

static uint64_t samples[ITER], samples_b[ITER];

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void report_samples(const char *row, uint64_t *s) {
  double sum = 0;
  for (int i = 0; i < ITER; i++) sum += (double)s[i];
  qsort(s, ITER, sizeof s[0], cmp);
  printf("| %s | %llu | %.0f | %llu | %llu | %llu | %llu |\n", row, (unsigned long long)s[0], sum / ITER,
         (unsigned long long)s[ITER - 1], (unsigned long long)s[ITER / 2],
         (unsigned long long)s[ITER * 99 / 100], (unsigned long long)s[ITER * 999 / 1000]);
  fflush(stdout);
}

static void report(const char *row) { report_samples(row, samples); }

#define MEASURE(row, op)                                 \
  do {                                                   \
    for (uint32_t i = 0; i < ITER; i++) {                \
      uint64_t t0 = now_ns();                            \
      op;                                                \
      __asm__ volatile("" ::: "memory");                 \
      samples[i] = now_ns() - t0;                        \
    }                                                    \
    report(row);                                         \
  } while (0)

/* Two rows timed in turns, ITER / TURNS events of each per turn, so that
 * the host slowing down for a while (other guests, TCG retranslating)
 * weighs on both alike: for a ratio, as the span's to the event's. Prints
 * both rows, then the ratio of their p50s. */
#define TURNS 20
#define MEASURE_IN_TURNS(row_a, op_a, row_b, op_b)                                                  \
  do {                                                                                               \
    for (uint32_t turn = 0; turn < TURNS; turn++) {                                                  \
      for (uint32_t i = turn * (ITER / TURNS); i < (turn + 1) * (ITER / TURNS); i++) {               \
        uint64_t t0 = now_ns();                                                                      \
        op_a;                                                                                        \
        __asm__ volatile("" ::: "memory");                                                          \
        samples[i] = now_ns() - t0;                                                                  \
      }                                                                                              \
      for (uint32_t i = turn * (ITER / TURNS); i < (turn + 1) * (ITER / TURNS); i++) {               \
        uint64_t t0 = now_ns();                                                                      \
        op_b;                                                                                        \
        __asm__ volatile("" ::: "memory");                                                          \
        samples_b[i] = now_ns() - t0;                                                                \
      }                                                                                              \
    }                                                                                                \
    report_samples(row_a, samples);                                                                  \
    report_samples(row_b, samples_b);                                                                \
    p50_ratio = (double)samples_b[ITER / 2] / (double)samples[ITER / 2];                             \
  } while (0)

/* The disabled path is below the clock's resolution per event: also time
 * ITER * 100 of them in one stretch, in BATCH_ROUNDS interleaved rounds,
 * and keep each row's fastest round (a round that a host hiccup or a TCG
 * retranslation slowed down says nothing about the check). */
#define BATCH_ROUNDS 5
#define BATCH_ROWS 11
static const char *batch_row[BATCH_ROWS];
static double batch_best[BATCH_ROWS];
#define MEASURE_BATCH(k, row, op)                                         \
  do {                                                                    \
    uint64_t t0 = now_ns();                                               \
    for (uint32_t i = 0; i < ITER * 100; i++) {                           \
      op;                                                                 \
      __asm__ volatile("" ::: "memory");                                  \
    }                                                                     \
    double per = (double)(now_ns() - t0) / (ITER * 100);                  \
    batch_row[k] = row;                                                   \
    if (batch_best[k] == 0 || per < batch_best[k]) batch_best[k] = per;   \
  } while (0)

static void raw_write(uint32_t v) {
  if (__atomic_load_n(&raw_word, __ATOMIC_RELAXED)) {
    struct iovec iov[2] = {{&raw_index, 4}, {&v, 4}};
    writev(raw_fd, iov, 2);
  }
}

static int raw_register(void) {
  raw_fd = open("/sys/kernel/tracing/user_events_data", O_RDWR | O_CLOEXEC);
  if (raw_fd < 0) return -1;
  struct user_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.size = sizeof reg;
  reg.enable_size = 4;
  reg.enable_addr = (uint64_t)(uintptr_t)&raw_word;
  reg.name_args = (uint64_t)(uintptr_t)"bench_raw u32 v";
  if (ioctl(raw_fd, 0xC0082A00, &reg) != 0) return -1;
  raw_index = reg.write_index;
  return 0;
}

static void wait_for(const char *what, int (*ready)(void)) {
  for (int i = 0; i < 6000 && !ready(); i++) usleep(10000);
  if (!ready()) {
    fprintf(stderr, "bench: %s was not enabled within 60 s\n", what);
    exit(1);
  }
}
static int usdt_on(void) { return __atomic_load_n(&usertrace_bench_probe4_semaphore, __ATOMIC_RELAXED) != 0; }
static int raw_on(void) { return __atomic_load_n(&raw_word, __ATOMIC_RELAXED) != 0; }
static int usertrace_on(void) { return USERTRACE_ENABLED(ev4); }
static int span_on(void) { return USERTRACE_ENABLED(span4) && USERTRACE_ENABLED(*bench.span_end); }
static int lttng_on(void) { return lttng_ust_tracepoint_enabled(usertrace_bench, ev) != 0; }

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp/usertrace-bench";
  int with_lttng = argc > 2 ? atoi(argv[2]) : 1;
  char path[512];
  volatile uint32_t sink = 0;
  double p50_ratio = 0;
  if (usertrace_provider_register(&bench) != USERTRACE_OK || raw_register() != 0) {
    char m[512];
    usertrace_last_error(m, sizeof m, NULL);
    fprintf(stderr, "bench: cannot register: %s\n", m);
    return 1;
  }
  printf("| row | min | avg | max | p50 | p99 | p99.9 |\n|---|---:|---:|---:|---:|---:|---:|\n");
  MEASURE("(a) null (loop and timing only)", sink = i);
  MEASURE("disabled: USERTRACE_ENABLED", if (USERTRACE_ENABLED(ev4)) sink = i);
  MEASURE("disabled: USERTRACE_EMIT", USERTRACE_EMIT(ev4, usertrace_u32(i)));
  {
    /* A dynamic tracepoint's cached word: one load instead of two. */
    const usertrace_field f[] = {USERTRACE_FIELD_U32(v)};
    usertrace_tracepoint *dyn = NULL;
    usertrace_tracepoint_new("bench_dyn", f, 1, 0, &dyn);
    const uint32_t *word = usertrace_tracepoint_enable_word(dyn);
    MEASURE("disabled: USERTRACE_WORD_ENABLED (dynamic, cached word)", if (USERTRACE_WORD_ENABLED(word)) sink = i);
    usertrace_tracepoint_free(dyn);
  }
  MEASURE("disabled: USDT semaphore check", if (usdt_on()) DTRACE_PROBE1(usertrace_bench, probe4, i));
  MEASURE("disabled: USDT probe (nop, no uprobe)", DTRACE_PROBE1(usertrace_bench, probe4, i));
  MEASURE("disabled: lttng_ust_tracepoint_enabled", if (lttng_ust_tracepoint_enabled(usertrace_bench, ev)) sink = i);
  MEASURE("disabled: lttng_ust_tracepoint", lttng_ust_tracepoint(usertrace_bench, ev, i));
  MEASURE("disabled: raw user_events word check", raw_write(i));
  MEASURE("disabled: two USERTRACE_ENABLED checks (two events)",
          if (USERTRACE_ENABLED(ev4)) sink = i; if (USERTRACE_ENABLED(ev4b)) sink = i);
  MEASURE("disabled: span, USERTRACE_SPAN_BEGIN + USERTRACE_SPAN_END", span_begin_end(i));
  MEASURE("disabled: span, USERTRACE_SPAN_SCOPED", span_scoped(i));

  printf("\nDisabled path, %d iterations in one timed stretch, fastest of %d rounds:\n\n| row | ns per iteration |\n|---|---:|\n",
         ITER * 100, BATCH_ROUNDS);
  for (int round = 0; round < BATCH_ROUNDS; round++) {
    MEASURE_BATCH(0, "empty loop", sink = i);
    MEASURE_BATCH(1, "USERTRACE_ENABLED (one load)", if (USERTRACE_ENABLED(ev4)) sink = i);
    MEASURE_BATCH(2, "USERTRACE_EMIT", USERTRACE_EMIT(ev4, usertrace_u32(i)));
    MEASURE_BATCH(3, "USDT semaphore check", if (usdt_on()) DTRACE_PROBE1(usertrace_bench, probe4, i));
    MEASURE_BATCH(4, "USDT probe (nop)", DTRACE_PROBE1(usertrace_bench, probe4, i));
    MEASURE_BATCH(5, "lttng_ust_tracepoint_enabled", if (lttng_ust_tracepoint_enabled(usertrace_bench, ev)) sink = i);
    MEASURE_BATCH(6, "lttng_ust_tracepoint", lttng_ust_tracepoint(usertrace_bench, ev, i));
    MEASURE_BATCH(7, "raw user_events word check", raw_write(i));
    MEASURE_BATCH(8, "two USERTRACE_ENABLED checks (two events)",
                  if (USERTRACE_ENABLED(ev4)) sink = i; if (USERTRACE_ENABLED(ev4b)) sink = i);
    MEASURE_BATCH(9, "span, USERTRACE_SPAN_BEGIN + USERTRACE_SPAN_END", span_begin_end(i));
    MEASURE_BATCH(10, "span, USERTRACE_SPAN_SCOPED", span_scoped(i));
  }
  for (int k = 0; k < BATCH_ROWS; k++) printf("| %s | %.2f |\n", batch_row[k], batch_best[k]);
  printf("\nEnabled (per event, ns):\n\n| row | min | avg | max | p50 | p99 | p99.9 |\n|---|---:|---:|---:|---:|---:|---:|\n");

  snprintf(path, sizeof path, "%s/disabled-done", dir);
  fclose(fopen(path, "w"));
  wait_for("the USDT uprobe", usdt_on);
  wait_for("the raw user_event", raw_on);
  wait_for("bench_ev4", usertrace_on);
  wait_for("bench_span4 and bench_span_end", span_on);
  if (with_lttng) wait_for("the LTTng event", lttng_on);
  sleep(1);
  MEASURE("(b) USDT probe + uprobe (ftrace)", DTRACE_PROBE1(usertrace_bench, probe4, i));
  MEASURE("(c) raw writev to user_events (ftrace)", raw_write(i));
  MEASURE("(d) usertrace from C, USERTRACE_EMIT (ftrace)", USERTRACE_EMIT(ev4, usertrace_u32(i)));
  /* Two events per iteration of (f): the begin (id + 4 bytes), the end (id). */
  MEASURE_IN_TURNS("(d') USERTRACE_EMIT, in turns with (f) (ftrace)", USERTRACE_EMIT(ev4, usertrace_u32(i)),
                   "(f) usertrace span from C, USERTRACE_SPAN_BEGIN + USERTRACE_SPAN_END (ftrace)", span_begin_end(i));
  if (with_lttng) MEASURE("(e) LTTng-UST, active session", lttng_ust_tracepoint(usertrace_bench, ev, i));
  printf("\np50 of (f) / p50 of (d'), timed in %d turns: %.2f\n", TURNS, p50_ratio);
  (void)sink;
  return 0;
}
