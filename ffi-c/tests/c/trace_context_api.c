/* The trace context API with nobody listening (run with
 * USERTRACE_TRANSPORT=user_events on a host without them, so nothing
 * registers): traceparent read and written back, bad headers refused with
 * the output left alone, a buffer too small, a context without ids, and
 * spans begun under a parent that pass it on unchanged (the macros, the
 * functions, the dynamic handles), or all zeros under none. */
#include <string.h>

#include "check.h"

USERTRACE_SPAN(request, USERTRACE_FIELD_U32(n));
USERTRACE_SPAN0(call);
USERTRACE_EVENT(plain, USERTRACE_FIELD_U32(n));
USERTRACE_PROVIDER(ctapi, &request, &call, &plain);

static const char *const EXAMPLE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

static int is_zero(const usertrace_trace_context *c) {
  return c->trace_id_hi == 0 && c->trace_id_lo == 0 && c->span_id == 0 && c->flags == 0;
}

static int same(const usertrace_trace_context *a, const usertrace_trace_context *b) {
  return a->trace_id_hi == b->trace_id_hi && a->trace_id_lo == b->trace_id_lo && a->span_id == b->span_id && a->flags == b->flags;
}

static void parse_and_format(void) {
  usertrace_trace_context c;
  char buf[USERTRACE_TRACEPARENT_SIZE];
  CHECK_RESULT(usertrace_trace_context_parse(EXAMPLE, &c), USERTRACE_OK);
  CHECK(c.trace_id_hi == 0x4bf92f3577b34da6ULL && c.trace_id_lo == 0xa3ce929d0e0e4736ULL);
  CHECK(c.span_id == 0x00f067aa0ba902b7ULL && c.flags == USERTRACE_TRACE_FLAG_SAMPLED);
  CHECK_RESULT(usertrace_trace_context_format(&c, buf, sizeof buf), USERTRACE_OK);
  CHECK(strcmp(buf, EXAMPLE) == 0);
  CHECK(strlen(buf) == USERTRACE_TRACEPARENT_LEN);
  /* Spaces around a header value are HTTP's, not the value's. */
  CHECK_RESULT(usertrace_trace_context_parse(" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t", &c), USERTRACE_OK);
  CHECK(c.span_id == 0x00f067aa0ba902b7ULL);
}

static void bad_input_leaves_the_output_alone(void) {
  const char *bad[] = {
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", /* uppercase */
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01", /* zero trace id */
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", /* zero parent id */
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", /* version ff */
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", /* 00 is 55 characters */
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
    "",
    "\xff\xfe",
  };
  char long_one[1024];
  memset(long_one, 'a', sizeof long_one - 1);
  long_one[sizeof long_one - 1] = 0;
  usertrace_trace_context c = {1, 2, 3, 4}, before = c;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_RESULT(usertrace_trace_context_parse(bad[i], &c), USERTRACE_ERR_INVALID_ARGUMENT);
    CHECK(same(&c, &before));
  }
  CHECK_RESULT(usertrace_trace_context_parse(long_one, &c), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(same(&c, &before));
  CHECK_RESULT(usertrace_trace_context_parse(NULL, &c), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_trace_context_parse(EXAMPLE, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  {
    char m[256];
    CHECK_RESULT(usertrace_trace_context_parse(bad[1], &c), USERTRACE_ERR_INVALID_ARGUMENT);
    usertrace_last_error(m, sizeof m, NULL);
    CHECK(strstr(m, "trace id is all zeros") != NULL);
  }
}

static void format_needs_ids_and_room(void) {
  usertrace_trace_context none = {0, 0, 0, 0}, c = {1, 2, 3, 1};
  char small[USERTRACE_TRACEPARENT_SIZE - 1] = "untouched";
  char buf[USERTRACE_TRACEPARENT_SIZE] = "untouched";
  CHECK_RESULT(usertrace_trace_context_format(&c, small, sizeof small), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(small, "untouched") == 0);
  CHECK_RESULT(usertrace_trace_context_format(&none, buf, sizeof buf), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(buf, "untouched") == 0);
  CHECK_RESULT(usertrace_trace_context_format(&c, buf, sizeof buf), USERTRACE_OK);
  CHECK(strcmp(buf, "00-00000000000000010000000000000002-0000000000000003-01") == 0);
  CHECK_RESULT(usertrace_trace_context_format(NULL, buf, sizeof buf), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_trace_context_format(&c, NULL, 56), USERTRACE_ERR_NULL_ARGUMENT);
}

static void nobody_listening_passes_the_parent_on(void) {
  usertrace_trace_context parent, out = {9, 9, 9, 9};
  uint64_t id = 99;
  CHECK_RESULT(usertrace_trace_context_parse(EXAMPLE, &parent), USERTRACE_OK);
  CHECK(!USERTRACE_ENABLED(request));
  id = USERTRACE_SPAN_BEGIN_IN(request, &parent, &out, usertrace_u32(1));
  CHECK(id == 0 && same(&out, &parent));
  id = USERTRACE_SPAN_BEGIN_IN0(call, NULL, &out);
  CHECK(id == 0 && is_zero(&out));
  id = 99;
  CHECK_RESULT(usertrace_event_begin_span_in(&request, &parent, NULL, 0, &id, &out), USERTRACE_OK);
  CHECK(id == 0 && same(&out, &parent));
  {
    usertrace_trace_context invalid = parent;
    invalid.span_id = 0;
    CHECK_RESULT(usertrace_event_begin_span_in(&request, &invalid, NULL, 0, &id, &out), USERTRACE_OK);
    CHECK(id == 0 && is_zero(&out));
  }
  /* out_context may be NULL; out_id may not; a plain event begins nothing. */
  CHECK_RESULT(usertrace_event_begin_span_in(&request, &parent, NULL, 0, &id, NULL), USERTRACE_OK);
  CHECK_RESULT(usertrace_event_begin_span_in(&request, &parent, NULL, 0, NULL, &out), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_event_begin_span_in(&plain, &parent, NULL, 0, &id, &out), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK_RESULT(usertrace_event_begin_span_in(NULL, &parent, NULL, 0, &id, &out), USERTRACE_ERR_NULL_ARGUMENT);
}

static void dynamic_spans_pass_the_parent_on_too(void) {
  usertrace_tracepoint *span = NULL, *plain_tp = NULL;
  const usertrace_field f[] = {USERTRACE_FIELD_U32(n)};
  const usertrace_value v[] = {usertrace_u32(5)};
  usertrace_trace_context parent, out = {9, 9, 9, 9};
  uint64_t id = 99;
  CHECK_RESULT(usertrace_trace_context_parse(EXAMPLE, &parent), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new_span("ctapi", "dyn", f, 1, 0, &span), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new("ctapi_plain_dyn", f, 1, 0, &plain_tp), USERTRACE_OK);
  REQUIRE(span != NULL && plain_tp != NULL);
  CHECK_RESULT(usertrace_tracepoint_begin_span_in(span, &parent, v, 1, &id, &out), USERTRACE_OK);
  CHECK(id == 0 && same(&out, &parent));
  CHECK_RESULT(usertrace_tracepoint_begin_span_in(span, NULL, v, 1, &id, &out), USERTRACE_OK);
  CHECK(id == 0 && is_zero(&out));
  CHECK_RESULT(usertrace_tracepoint_begin_span_in(plain_tp, &parent, v, 1, &id, &out), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_begin_span_in(NULL, &parent, v, 1, &id, &out), USERTRACE_ERR_NULL_ARGUMENT);
  usertrace_tracepoint_free(span);
  usertrace_tracepoint_free(plain_tp);
}

int main(void) {
  (void)usertrace_provider_register(&ctapi);
  parse_and_format();
  bad_input_leaves_the_output_alone();
  format_needs_ids_and_room();
  nobody_listening_passes_the_parent_on();
  dynamic_spans_pass_the_parent_on_too();
  return check_done("trace_context_api");
}
