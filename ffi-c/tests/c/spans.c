/* Spans from C, once a tracer is attached: nested spans on one thread
 * with typed fields at begin, a span begun on one thread and ended on
 * another (both ways), scoped spans that end when their block is left
 * (marked by events before and after), and a dynamic span. Each id is
 * written to IDS_FILE, in the order the spans begin, so that the guest test
 * (check_output.py record-spans) can hold the recorded events to them.
 *   spans IDS_FILE */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "wait.h"

USERTRACE_SPAN(request, USERTRACE_FIELD_U64(big), USERTRACE_FIELD_I32(delta), USERTRACE_FIELD_STR(path));
USERTRACE_SPAN0(step);
USERTRACE_SPAN(handoff, USERTRACE_FIELD_U32(job));
USERTRACE_SPAN(scoped, USERTRACE_FIELD_U32(n));
USERTRACE_EVENT(mark, USERTRACE_FIELD_U32(n));
USERTRACE_PROVIDER(cspan, &request, &step, &handoff, &scoped, &mark);

static FILE *ids;

static uint64_t began(uint64_t id) {
  CHECK(id != 0);
  fprintf(ids, "%llu\n", (unsigned long long)id);
  return id;
}

/* The other thread: ends the span it is given, begins one for main to end. */
static void *worker(void *arg) {
  uint64_t *id = (uint64_t *)arg;
  pthread_setname_np(pthread_self(), "cspan_worker");
  USERTRACE_SPAN_END(cspan, id[0]);
  id[1] = USERTRACE_SPAN_BEGIN(handoff, usertrace_u32(8));
  return NULL;
}

static void returns_early(void) {
  USERTRACE_SPAN_SCOPED(cspan, scoped, usertrace_u32(2));
  /* Writes the id; the span ends on the return below. */
  fprintf(ids, "scoped 2\n");
  return;
}

int main(int argc, char **argv) {
  usertrace_event *const wait_for[] = {&request, &step, &handoff, &scoped, &mark};
  usertrace_tracepoint *dyn = NULL, *dyn_end = NULL;
  const usertrace_field dyn_fields[] = {USERTRACE_FIELD_U32(n)};
  REQUIRE(argc == 2);
  ids = fopen(argv[1], "w");
  REQUIRE(ids != NULL);

  CHECK_RESULT(usertrace_provider_register(&cspan), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new_span("cspan", "dyn", dyn_fields, 1, 0, &dyn), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new_span_end("cspan", 0, &dyn_end), USERTRACE_OK);
  REQUIRE(dyn != NULL && dyn_end != NULL);
  CHECK_RESULT(usertrace_tracepoint_register(dyn), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_register(dyn_end), USERTRACE_OK);
  if (check_failures) return check_done("spans");
  for (size_t i = 0; i < sizeof wait_for / sizeof wait_for[0]; i++) REQUIRE(wait_enabled(&wait_for[i]->enabled, 60));
  REQUIRE(wait_enabled(&cspan.span_end->enabled, 60));
  REQUIRE(wait_enabled(usertrace_tracepoint_enable_word(dyn), 60));
  REQUIRE(wait_enabled(usertrace_tracepoint_enable_word(dyn_end), 60));

  /* Nested on one thread: request, with two steps inside it. The fields:
   * a u64 past 2^63, a negative i32, a UTF-8 string. */
  {
    uint64_t outer = began(USERTRACE_SPAN_BEGIN(request, usertrace_u64(9223372036854775813ULL), usertrace_i32(-42),
                                                usertrace_str("/h\xc3\xa9llo/w\xc3\xb6rld")));
    uint64_t inner = began(USERTRACE_SPAN_BEGIN0(step));
    USERTRACE_SPAN_END(cspan, inner);
    inner = began(USERTRACE_SPAN_BEGIN0(step));
    USERTRACE_SPAN_END(cspan, inner);
    USERTRACE_SPAN_END(cspan, outer);
  }

  /* Across threads: main begins, the worker ends; the worker begins, main ends. */
  {
    uint64_t id[2];
    pthread_t t;
    id[0] = began(USERTRACE_SPAN_BEGIN(handoff, usertrace_u32(7)));
    id[1] = 0;
    REQUIRE(pthread_create(&t, NULL, worker, id) == 0);
    REQUIRE(pthread_join(t, NULL) == 0);
    began(id[1]);
    CHECK_RESULT(usertrace_provider_end_span(&cspan, id[1]), USERTRACE_OK);
  }

  /* Scoped: ends when the block is left, between the two marks; and by a
   * return. (Its id is not visible: the checker takes it from the begin.) */
  {
    USERTRACE_SPAN_SCOPED(cspan, scoped, usertrace_u32(1));
    fprintf(ids, "scoped 1\n");
    USERTRACE_EMIT(mark, usertrace_u32(1));
  }
  USERTRACE_EMIT(mark, usertrace_u32(2));
  returns_early();
  USERTRACE_EMIT(mark, usertrace_u32(3));

  /* Dynamic. */
  {
    uint64_t id = 0;
    usertrace_value v = usertrace_u32(9);
    CHECK_RESULT(usertrace_tracepoint_begin_span(dyn, &v, 1, &id), USERTRACE_OK);
    began(id);
    CHECK_RESULT(usertrace_tracepoint_end_span(dyn_end, id), USERTRACE_OK);
  }

  /* Refused while enabled, and nothing written: the recording shows no
   * event for these. */
  {
    uint64_t id = 12345;
    usertrace_value bad = usertrace_str("not a u32");
    CHECK_RESULT(usertrace_event_begin_span(&handoff, &bad, 1, &id), USERTRACE_ERR_VALUE_MISMATCH);
    CHECK_RESULT(usertrace_event_begin_span(&handoff, NULL, 0, &id), USERTRACE_ERR_VALUE_MISMATCH);
    CHECK_RESULT(usertrace_tracepoint_begin_span(dyn, &bad, 1, &id), USERTRACE_ERR_VALUE_MISMATCH);
    CHECK(id == 12345);
    CHECK(USERTRACE_SPAN_BEGIN(handoff, usertrace_str("not a u32")) == 0);
  }
  USERTRACE_EMIT(mark, usertrace_u32(4));

  usertrace_tracepoint_free(dyn);
  usertrace_tracepoint_free(dyn_end);
  fclose(ids);
  return check_done("spans");
}
