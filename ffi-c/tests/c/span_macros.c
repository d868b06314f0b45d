/* The span macros' control flow, on any host (see fake_spans.h): while
 * nobody listens nothing is called and no value evaluated; once a tracer
 * is attached USERTRACE_SPAN_BEGIN gives the library's id, USERTRACE_SPAN_END
 * ends that id, and USERTRACE_SPAN_SCOPED ends its span when the block is
 * left, innermost first, by return too. */
#include "fake_spans.h"

USERTRACE_SPAN(req, USERTRACE_FIELD_U64(big), USERTRACE_FIELD_I32(delta), USERTRACE_FIELD_STR(path));
USERTRACE_SPAN0(step);
USERTRACE_PROVIDER(hspan, &req, &step);

static int evaluated;
static uint64_t side_effect(void) { return (uint64_t)++evaluated; }

static int returns_early(int early) {
  USERTRACE_SPAN_SCOPED0(hspan, step);
  if (early) return 1;
  fake_mark(99);
  return 0;
}

int main(void) {
  uint64_t id;
  CHECK(req.kind == USERTRACE_KIND_SPAN && step.kind == USERTRACE_KIND_SPAN && req.field_count == 3);
  CHECK(hspan.span_end != NULL && hspan.span_end->kind == USERTRACE_KIND_SPAN_END);

  /* Nobody listens: one load decides, nothing is called or evaluated. */
  id = USERTRACE_SPAN_BEGIN(req, usertrace_u64(side_effect()), usertrace_i32(-1), usertrace_str("/"));
  CHECK(id == 0);
  USERTRACE_SPAN_END(hspan, id);
  CHECK(USERTRACE_SPAN_BEGIN0(step) == 0);
  {
    USERTRACE_SPAN_SCOPED(hspan, req, usertrace_u64(side_effect()), usertrace_i32(-1), usertrace_str("/"));
    USERTRACE_SPAN_SCOPED0(hspan, step);
  }
  CHECK(returns_early(1) == 1);
  CHECK(evaluated == 0);
  CHECK(fake_ncalls == 0);

  /* A tracer attaches. */
  fake_attach(&req);
  fake_attach(&step);
  id = USERTRACE_SPAN_BEGIN(req, usertrace_u64(9223372036854775813ULL), usertrace_i32(-42), usertrace_str("/p"));
  CHECK(id == 101);
  CHECK(fake_is(0, 'b', &req, 101));
  CHECK(fake_calls[0].count == 3 && fake_calls[0].first.type == USERTRACE_TYPE_U64 &&
        fake_calls[0].first.as.u == 9223372036854775813ULL);
  USERTRACE_SPAN_END(hspan, id);
  CHECK(fake_is(1, 'e', &hspan, 101));
  USERTRACE_SPAN_END(hspan, 0); /* not begun: no call */
  CHECK(fake_ncalls == 2);

  /* Scoped spans end when their block is left, the innermost first. */
  {
    USERTRACE_SPAN_SCOPED(hspan, req, usertrace_u64(side_effect()), usertrace_i32(-1), usertrace_str("/"));
    {
      USERTRACE_SPAN_SCOPED0(hspan, step);
      fake_mark(1);
    }
    USERTRACE_SPAN_SCOPED0(hspan, step); /* a second one in the same block */
    fake_mark(2);
  }
  fake_mark(3);
  CHECK(evaluated == 1);
  CHECK(fake_is(2, 'b', &req, 102));
  CHECK(fake_is(3, 'b', &step, 103));
  CHECK(fake_is(4, 'm', NULL, 1));
  CHECK(fake_is(5, 'e', &hspan, 103));
  CHECK(fake_is(6, 'b', &step, 104));
  CHECK(fake_is(7, 'm', NULL, 2));
  CHECK(fake_is(8, 'e', &hspan, 104));
  CHECK(fake_is(9, 'e', &hspan, 102));
  CHECK(fake_is(10, 'm', NULL, 3));

  /* A return ends it too. */
  CHECK(returns_early(1) == 1);
  CHECK(fake_is(11, 'b', &step, 105));
  CHECK(fake_is(12, 'e', &hspan, 105));
  CHECK(returns_early(0) == 0);
  CHECK(fake_is(13, 'b', &step, 106));
  CHECK(fake_is(14, 'm', NULL, 99));
  CHECK(fake_is(15, 'e', &hspan, 106));

  /* A begin that fails gives 0, and so nothing to end. */
  fake_failing_span = &step;
  {
    USERTRACE_SPAN_SCOPED0(hspan, step);
    CHECK(USERTRACE_SPAN_BEGIN0(step) == 0);
  }
  CHECK(fake_is(16, 'b', &step, 0));
  CHECK(fake_is(17, 'b', &step, 0));
  CHECK(fake_ncalls == 18);
  return check_done("span_macros");
}
