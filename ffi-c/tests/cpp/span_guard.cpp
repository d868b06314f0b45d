// usertrace::span, the C++ guard of a span, on any host (see
// fake_spans.h): it ends its span once, when destroyed (by return or by an
// exception), or earlier by end(); a move hands the span over, so only the
// last owner ends it; release() gives the id up without ending it; it
// cannot be copied. While nobody listens nothing is called.
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "fake_spans.h"

USERTRACE_SPAN(work, USERTRACE_FIELD_STR(what));
USERTRACE_PROVIDER(gspan, &work);

static_assert(!std::is_copy_constructible<usertrace::span>::value, "one span, one end: no copies");
static_assert(!std::is_copy_assignable<usertrace::span>::value, "one span, one end: no copies");
static_assert(std::is_nothrow_move_constructible<usertrace::span>::value, "movable");
static_assert(std::is_nothrow_move_assignable<usertrace::span>::value, "movable");
static_assert(std::is_nothrow_destructible<usertrace::span>::value, "ends without throwing");

static int evaluated;
static const char *side_effect() {
  ++evaluated;
  return "evaluated";
}

static usertrace::span begin(const char *what) { return usertrace::span(gspan, USERTRACE_SPAN_BEGIN(work, usertrace_str(what))); }

static void throws() {
  USERTRACE_SPAN_SCOPED(gspan, work, usertrace_str("throws"));
  throw std::runtime_error("out");
}

int main() {
  {
    // Nobody listens.
    usertrace::span s(gspan, USERTRACE_SPAN_BEGIN(work, usertrace_str(side_effect())));
    USERTRACE_SPAN_SCOPED(gspan, work, usertrace_str(side_effect()));
    CHECK(s.id() == 0);
    usertrace::span d;
    CHECK(d.id() == 0 && d.end() == USERTRACE_OK);
  }
  CHECK(evaluated == 0 && fake_ncalls == 0);

  fake_attach(&work);
  {
    usertrace::span outer = begin("outer");  // 101
    CHECK(outer.id() == 101);
    {
      usertrace::span moved = begin("moved");  // 102
      usertrace::span to(std::move(moved));
      CHECK(moved.id() == 0 && to.id() == 102);
      fake_mark(1);
    }  // ends 102 once
    usertrace::span a = begin("a");  // 103
    usertrace::span b = begin("b");  // 104
    a = std::move(b);                // ends 103 now; a owns 104
    CHECK(a.id() == 104 && b.id() == 0);
    fake_mark(2);
    usertrace::span r = begin("released");  // 105
    uint64_t kept = r.release();
    CHECK(kept == 105 && r.id() == 0);
    usertrace::span e = begin("early");  // 106
    CHECK(e.end() == USERTRACE_OK && e.id() == 0);  // ends 106 now, once
    try {
      throws();  // 107, ended by the unwinding
    } catch (const std::runtime_error &) {
      fake_mark(3);
    }
    USERTRACE_SPAN_END(gspan, kept);  // the released one, ended by id
  }  // ends a (104), then outer (101)

  int i = 0;
  CHECK(fake_is(i++, 'b', &work, 101));
  CHECK(fake_calls[0].count == 1 && fake_calls[0].first.type == USERTRACE_TYPE_STR);
  CHECK(fake_is(i++, 'b', &work, 102));
  CHECK(fake_is(i++, 'm', NULL, 1));
  CHECK(fake_is(i++, 'e', &gspan, 102));
  CHECK(fake_is(i++, 'b', &work, 103));
  CHECK(fake_is(i++, 'b', &work, 104));
  CHECK(fake_is(i++, 'e', &gspan, 103));
  CHECK(fake_is(i++, 'm', NULL, 2));
  CHECK(fake_is(i++, 'b', &work, 105));
  CHECK(fake_is(i++, 'b', &work, 106));
  CHECK(fake_is(i++, 'e', &gspan, 106));
  CHECK(fake_is(i++, 'b', &work, 107));
  CHECK(fake_is(i++, 'e', &gspan, 107));
  CHECK(fake_is(i++, 'm', NULL, 3));
  CHECK(fake_is(i++, 'e', &gspan, 105));
  CHECK(fake_is(i++, 'e', &gspan, 104));
  CHECK(fake_is(i++, 'e', &gspan, 101));
  CHECK(fake_ncalls == i);
  return check_done("span_guard");
}
