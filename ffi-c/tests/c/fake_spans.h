/* Stand-ins for libusertrace's span entry points, for the host tests of
 * the span macros. Link with
 *   -Wl,--wrap=usertrace_event_begin_span,--wrap=usertrace_provider_end_span
 * and every call the header's macros make lands here instead: it is logged,
 * and a begin hands out the ids 101, 102, ... So a host without
 * user_events can check what the macros call, when, and with which id
 * (the library itself is tested in the guest). fake_mark() logs a point in
 * between, to check the order. */
#ifndef USERTRACE_TEST_FAKE_SPANS_H
#define USERTRACE_TEST_FAKE_SPANS_H
#include <string.h>

#include "check.h"

struct fake_call {
  char what; /* 'b' begin, 'e' end, 'm' mark */
  const void *target; /* the span (begin), the provider (end) */
  uint64_t id; /* the id handed out (begin) or given (end); the mark's number */
  size_t count; /* values given to a begin */
  usertrace_value first; /* the first of them */
};

static struct fake_call fake_calls[64];
static int fake_ncalls;
static uint64_t fake_next_id = 101;
/* A begin of this span fails (as one with values of the wrong type would). */
static const usertrace_event *fake_failing_span;

static void fake_log(char what, const void *target, uint64_t id, size_t count, const usertrace_value *values) {
  REQUIRE(fake_ncalls < (int)(sizeof fake_calls / sizeof fake_calls[0]));
  struct fake_call *c = &fake_calls[fake_ncalls++];
  memset(c, 0, sizeof *c);
  c->what = what;
  c->target = target;
  c->id = id;
  c->count = count;
  if (count > 0) c->first = values[0];
}

static void fake_mark(uint64_t n) { fake_log('m', NULL, n, 0, NULL); }

/* Whether call `i` is `what` on `target` with `id`; prints the call if not. */
static int fake_is(int i, char what, const void *target, uint64_t id) {
  if (i >= fake_ncalls) {
    fprintf(stderr, "call %d: none (%d calls), expected '%c' id %llu\n", i, fake_ncalls, what, (unsigned long long)id);
    return 0;
  }
  const struct fake_call *c = &fake_calls[i];
  if (c->what == what && c->target == target && c->id == id) return 1;
  fprintf(stderr, "call %d: '%c' %p id %llu, expected '%c' %p id %llu\n", i, c->what, c->target,
          (unsigned long long)c->id, what, target, (unsigned long long)id);
  return 0;
}

#ifdef __cplusplus
extern "C" {
#endif
usertrace_result __wrap_usertrace_event_begin_span(const usertrace_event *span, const usertrace_value *values,
                                                   size_t count, uint64_t *out_id);
usertrace_result __wrap_usertrace_provider_end_span(const usertrace_provider *p, uint64_t id);

usertrace_result __wrap_usertrace_event_begin_span(const usertrace_event *span, const usertrace_value *values,
                                                   size_t count, uint64_t *out_id) {
  if (span == fake_failing_span) {
    fake_log('b', span, 0, count, values);
    return USERTRACE_ERR_VALUE_MISMATCH;
  }
  *out_id = fake_next_id++;
  fake_log('b', span, *out_id, count, values);
  return USERTRACE_OK;
}

usertrace_result __wrap_usertrace_provider_end_span(const usertrace_provider *p, uint64_t id) {
  fake_log('e', p, id, 0, NULL);
  return USERTRACE_OK;
}
#ifdef __cplusplus
}
#endif

/* What the kernel does when a tracer attaches: sets the enable word. */
static void fake_attach(usertrace_event *ev) { __atomic_store_n(&ev->enabled, 1, __ATOMIC_RELAXED); }
#endif
