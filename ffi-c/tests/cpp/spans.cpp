// Spans from C++, once a tracer is attached: usertrace::span guards that
// end their span when they go out of scope, after a move, by an exception,
// and USERTRACE_SPAN_SCOPED. Each id is written to IDS_FILE in the order
// the spans begin, for check_output.py record-spans.
//   spans_cpp IDS_FILE
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "check.h"
#include "wait.h"

USERTRACE_SPAN(work, USERTRACE_FIELD_STR(what), USERTRACE_FIELD_I64(n));
USERTRACE_EVENT(mark, USERTRACE_FIELD_U32(n));
USERTRACE_PROVIDER(cxxspan, &work, &mark);

static FILE *ids;

static usertrace::span begin(const char *what, int64_t n) {
  usertrace::span s(cxxspan, USERTRACE_SPAN_BEGIN(work, usertrace_str(what), usertrace_i64(n)));
  CHECK(s.id() != 0);
  std::fprintf(ids, "%llu\n", (unsigned long long)s.id());
  return s;
}

static void throws() {
  usertrace::span s = begin("throws", -3);
  throw std::runtime_error("leaves the span");
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  ids = std::fopen(argv[1], "w");
  REQUIRE(ids != nullptr);
  CHECK_RESULT(usertrace_provider_register(&cxxspan), USERTRACE_OK);
  if (check_failures) return check_done("spans_cpp");
  REQUIRE(wait_enabled(&work.enabled, 60));
  REQUIRE(wait_enabled(&mark.enabled, 60));
  REQUIRE(wait_enabled(&cxxspan.span_end->enabled, 60));
  {
    usertrace::span outer = begin("outer", -1);
    {
      usertrace::span inner = begin("inner", -2);
    }
    {
      usertrace::span first = begin("moved", 5);
      usertrace::span second(std::move(first));
      USERTRACE_EMIT(mark, usertrace_u32(1));
    }
    try {
      throws();
    } catch (const std::runtime_error &) {
      USERTRACE_EMIT(mark, usertrace_u32(2));
    }
    {
      USERTRACE_SPAN_SCOPED(cxxspan, work, usertrace_str("scoped"), usertrace_i64(6));
      std::fprintf(ids, "scoped\n");
      USERTRACE_EMIT(mark, usertrace_u32(3));
    }
  }
  std::fclose(ids);
  return check_done("spans_cpp");
}
