/* The span API's contract without a tracer: NULL, the wrong kind of event
 * or handle, and bad definitions give error codes (never a crash, never an
 * id), whether or not anybody listens; a span that nobody listens to gets
 * id 0, and ending 0 is no error. Runs on any kernel, under ASan. */
#include <string.h>

#include "check.h"

USERTRACE_EVENT(plain, USERTRACE_FIELD_U32(n));
USERTRACE_SPAN(work, USERTRACE_FIELD_U32(n), USERTRACE_FIELD_STR(what));
USERTRACE_SPAN0(bare);
USERTRACE_PROVIDER(sapi, &plain, &work, &bare);

/* Providers written by hand, as USERTRACE_PROVIDER would not make them. */
static usertrace_event lone = {0, 0, USERTRACE_KIND_SPAN, "lone", NULL, NULL};
static usertrace_event *const lone_events[] = {&lone, NULL};
static const usertrace_provider no_span_end = {"noend", lone_events, 0, NULL};
static usertrace_event not_an_end = {0, 0, USERTRACE_KIND_EVENT, "notend", NULL, NULL};
static const usertrace_provider wrong_span_end = {"wrongend", lone_events, 0, &not_an_end};
static usertrace_event odd = {0, 0, 7, "odd", NULL, NULL};
static usertrace_event *const odd_events[] = {&odd, NULL};
static const usertrace_provider odd_kind = {"oddkind", odd_events, 0, NULL};
USERTRACE_SPAN0(bad_name_span);
static usertrace_event *const bad_events[] = {&bad_name_span, NULL};
static usertrace_event bad_end = {0, 0, USERTRACE_KIND_SPAN_END, NULL, NULL, NULL};
static const usertrace_provider bad_provider = {"bad:name", bad_events, 0, &bad_end};

static void last_error_contains(const char *part, int line) {
  char buf[512];
  usertrace_last_error(buf, sizeof buf, NULL);
  if (!strstr(buf, part)) {
    fprintf(stderr, "span_errors.c:%d: last error \"%s\" lacks \"%s\"\n", line, buf, part);
    check_failures++;
  }
}
#define LAST_ERROR_CONTAINS(part) last_error_contains((part), __LINE__)

int main(void) {
  const uint64_t untouched = 12345;
  uint64_t id = untouched;
  usertrace_value v[2];
  usertrace_field many[32];
  char names[32][4];
  usertrace_tracepoint *span = NULL, *end = NULL, *tp = NULL;
  int available = registrations_succeed();
  v[0] = usertrace_u32(1);
  v[1] = usertrace_str("x");

  /* Static spans: NULL, and beginning what is not a span. Out-params are
   * written only on success. */
  CHECK_RESULT(usertrace_event_begin_span(NULL, v, 2, &id), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_event_begin_span(&work, v, 2, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  LAST_ERROR_CONTAINS("out_id must not be NULL");
  CHECK_RESULT(usertrace_event_begin_span(&plain, v, 1, &id), USERTRACE_ERR_INVALID_ARGUMENT);
  LAST_ERROR_CONTAINS("event plain is not a span: declare it with USERTRACE_SPAN");
  CHECK(id == untouched);
  CHECK_RESULT(usertrace_provider_end_span(NULL, 1), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_provider_end_span(&no_span_end, 1), USERTRACE_ERR_NULL_ARGUMENT);
  LAST_ERROR_CONTAINS("provider span_end must not be NULL");
  CHECK_RESULT(usertrace_provider_end_span(&wrong_span_end, 1), USERTRACE_ERR_INVALID_ARGUMENT);
  LAST_ERROR_CONTAINS("the span_end of provider wrongend is of kind 0, not USERTRACE_KIND_SPAN_END");

  /* Registration: a span's provider needs its span end; bad names and
   * kinds are refused by the rules events have. */
  CHECK_RESULT(usertrace_provider_register(&no_span_end), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_provider_register(&wrong_span_end), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK_RESULT(usertrace_provider_register(&odd_kind), USERTRACE_ERR_INVALID_ARGUMENT);
  LAST_ERROR_CONTAINS("event oddkind_odd has kind 7");
  CHECK_RESULT(usertrace_provider_register(&bad_provider), USERTRACE_ERR_INVALID_NAME);
  CHECK(bad_end.registration == NULL);
  CHECK_RESULT(usertrace_provider_release(&no_span_end), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_provider_release(&wrong_span_end), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK_RESULT(usertrace_provider_release(&odd_kind), USERTRACE_OK);

  /* Registered, nobody listening: id 0, nothing checked, ending 0 is fine. */
  CHECK_RESULT(usertrace_provider_register(&sapi), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  CHECK(work.registration != NULL && sapi.span_end->registration != NULL);
  CHECK_RESULT(usertrace_event_begin_span(&work, v, 2, &id), USERTRACE_OK);
  CHECK(id == 0);
  id = untouched;
  CHECK_RESULT(usertrace_event_begin_span(&bare, NULL, 0, &id), USERTRACE_OK);
  CHECK(id == 0);
  CHECK_RESULT(usertrace_event_begin_span(&work, v, 1, &id), USERTRACE_OK); /* not checked while off */
  CHECK(USERTRACE_SPAN_BEGIN(work, usertrace_u32(2), usertrace_str("y")) == 0);
  CHECK_RESULT(usertrace_provider_end_span(&sapi, 0), USERTRACE_OK);
  CHECK_RESULT(usertrace_provider_end_span(&sapi, 77), USERTRACE_OK); /* nobody listens to the end */
  CHECK_RESULT(usertrace_provider_release(&sapi), USERTRACE_OK);
  CHECK(work.registration == NULL && sapi.span_end->registration == NULL);

  /* Dynamic spans: definitions. */
  CHECK_RESULT(usertrace_tracepoint_new_span(NULL, "s", NULL, 0, 0, &span), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new_span("p", NULL, NULL, 0, 0, &span), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new_span("p", "s", NULL, 0, 0, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new_span("p", "s", NULL, 1, 0, &span), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new_span("a:b", "s", NULL, 0, 0, &span), USERTRACE_ERR_INVALID_NAME);
  LAST_ERROR_CONTAINS("provider");
  CHECK_RESULT(usertrace_tracepoint_new_span("p", "s s", NULL, 0, 0, &span), USERTRACE_ERR_INVALID_NAME);
  CHECK_RESULT(usertrace_tracepoint_new_span("p", "s", NULL, 0, 0x80, &span), USERTRACE_ERR_INVALID_ARGUMENT);
  for (int i = 0; i < 32; i++) {
    snprintf(names[i], sizeof names[i], "f%d", i);
    many[i].name = names[i];
    many[i].type = USERTRACE_TYPE_U8;
    many[i].len = 0;
  }
  /* 29 of its own, and the id with its trace context (4): one more than
   * an event may have. */
  CHECK_RESULT(usertrace_tracepoint_new_span("p", "s", many, 29, 0, &span), USERTRACE_ERR_TOO_MANY_FIELDS);
  LAST_ERROR_CONTAINS("33 fields");
  /* A field named like the id: the core's duplicate check. */
  many[0].name = "span_begin";
  CHECK_RESULT(usertrace_tracepoint_new_span("p", "s", many, 1, 0, &span), USERTRACE_ERR_DUPLICATE_FIELD);
  CHECK(span == NULL);
  CHECK_RESULT(usertrace_tracepoint_new_span_end(NULL, 0, &end), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new_span_end("p", 0, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new_span_end("a b", 0, &end), USERTRACE_ERR_INVALID_NAME);
  CHECK_RESULT(usertrace_tracepoint_new_span_end("p", 0x80, &end), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(end == NULL);

  /* Dynamic spans: each handle begins or ends only what it was made for. */
  {
    const usertrace_field f[] = {USERTRACE_FIELD_U32(n), USERTRACE_FIELD_STR(what)};
    CHECK_RESULT(usertrace_tracepoint_new_span("sapi", "dyn", f, 2, 0, &span), USERTRACE_OK);
    CHECK_RESULT(usertrace_tracepoint_new_span_end("sapi", 0, &end), USERTRACE_OK);
    CHECK_RESULT(usertrace_tracepoint_new("sapi_plain_dyn", f, 2, 0, &tp), USERTRACE_OK);
  }
  REQUIRE(span != NULL && end != NULL && tp != NULL);
  CHECK_RESULT(usertrace_tracepoint_begin_span(NULL, v, 2, &id), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_begin_span(span, v, 2, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  id = untouched;
  CHECK_RESULT(usertrace_tracepoint_begin_span(tp, v, 2, &id), USERTRACE_ERR_INVALID_ARGUMENT);
  LAST_ERROR_CONTAINS("tracepoint sapi_plain_dyn is not a span: make it with usertrace_tracepoint_new_span");
  CHECK_RESULT(usertrace_tracepoint_begin_span(end, v, 2, &id), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(id == untouched);
  CHECK_RESULT(usertrace_tracepoint_end_span(NULL, 1), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_end_span(span, 1), USERTRACE_ERR_INVALID_ARGUMENT);
  LAST_ERROR_CONTAINS("tracepoint sapi_dyn is not a span end");
  CHECK_RESULT(usertrace_tracepoint_end_span(tp, 1), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_register(span), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  CHECK_RESULT(usertrace_tracepoint_register(end), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  CHECK_RESULT(usertrace_tracepoint_begin_span(span, v, 2, &id), USERTRACE_OK);
  CHECK(id == 0);
  CHECK_RESULT(usertrace_tracepoint_end_span(end, 0), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_end_span(end, 77), USERTRACE_OK);
  usertrace_tracepoint_free(span);
  usertrace_tracepoint_free(end);
  usertrace_tracepoint_free(tp);
  return check_done("span_errors");
}
