/* Spans with a trace context from C, once a tracer is attached: one under
 * a remote parent (a traceparent header), one begun under it (its
 * context as the parent), a root of a new trace, a dynamic span under
 * that root, and a span begun without a parent, which says nothing of
 * its trace. Each begin's expected fields are written to IDS_FILE, one
 * line per begin in order: `id trace_id_hi trace_id_lo parent_span_id`,
 * then the traceparent each span with a context hands on, as
 * `traceparent ID TEXT`; check_output.py record-trace-context holds the
 * recording to them.
 *   trace_context_spans IDS_FILE */
#include <inttypes.h>
#include <string.h>

#include "check.h"
#include "wait.h"

USERTRACE_SPAN(request, USERTRACE_FIELD_U32(n));
USERTRACE_SPAN0(call);
USERTRACE_PROVIDER(ctrace, &request, &call);

static FILE *ids;

static void wrote(uint64_t id, const usertrace_trace_context *c, uint64_t parent) {
  char text[USERTRACE_TRACEPARENT_SIZE];
  CHECK(id != 0 && id == c->span_id);
  fprintf(ids, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", id, c->trace_id_hi, c->trace_id_lo, parent);
  CHECK_RESULT(usertrace_trace_context_format(c, text, sizeof text), USERTRACE_OK);
  fprintf(ids, "traceparent %" PRIu64 " %s\n", id, text);
}

int main(int argc, char **argv) {
  usertrace_tracepoint *dyn = NULL, *dyn_end = NULL;
  const usertrace_field dyn_fields[] = {USERTRACE_FIELD_U32(n)};
  const usertrace_value dyn_values[] = {usertrace_u32(4)};
  usertrace_trace_context remote, a, b, c, d;
  uint64_t id_a, id_b, id_c, id_d, id_e;
  REQUIRE(argc == 2);
  ids = fopen(argv[1], "w");
  REQUIRE(ids != NULL);
  CHECK_RESULT(usertrace_provider_register(&ctrace), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new_span("ctrace", "dyn", dyn_fields, 1, 0, &dyn), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new_span_end("ctrace", 0, &dyn_end), USERTRACE_OK);
  REQUIRE(dyn != NULL && dyn_end != NULL);
  CHECK_RESULT(usertrace_tracepoint_register(dyn), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_register(dyn_end), USERTRACE_OK);
  if (check_failures) return check_done("trace_context_spans");
  REQUIRE(wait_enabled(&request.enabled, 60) && wait_enabled(&call.enabled, 60));
  REQUIRE(wait_enabled(&ctrace.span_end->enabled, 60));
  REQUIRE(wait_enabled(usertrace_tracepoint_enable_word(dyn), 60) && wait_enabled(usertrace_tracepoint_enable_word(dyn_end), 60));

  CHECK_RESULT(usertrace_trace_context_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &remote), USERTRACE_OK);
  id_a = USERTRACE_SPAN_BEGIN_IN(request, &remote, &a, usertrace_u32(1));
  wrote(id_a, &a, remote.span_id);
  id_b = USERTRACE_SPAN_BEGIN_IN0(call, &a, &b);
  wrote(id_b, &b, id_a);
  USERTRACE_SPAN_END(ctrace, id_b);
  USERTRACE_SPAN_END(ctrace, id_a);

  id_c = USERTRACE_SPAN_BEGIN_IN(request, NULL, &c, usertrace_u32(3));
  wrote(id_c, &c, 0);
  CHECK_RESULT(usertrace_tracepoint_begin_span_in(dyn, &c, dyn_values, 1, &id_d, &d), USERTRACE_OK);
  wrote(id_d, &d, id_c);
  CHECK_RESULT(usertrace_tracepoint_end_span(dyn_end, id_d), USERTRACE_OK);
  USERTRACE_SPAN_END(ctrace, id_c);

  id_e = USERTRACE_SPAN_BEGIN(request, usertrace_u32(5));
  CHECK(id_e != 0);
  fprintf(ids, "%" PRIu64 " 0 0 0\n", id_e);
  USERTRACE_SPAN_END(ctrace, id_e);
  fclose(ids);
  usertrace_tracepoint_free(dyn);
  usertrace_tracepoint_free(dyn_end);
  return check_done("trace_context_spans");
}
