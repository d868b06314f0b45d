// Every macro and inline function of usertrace.h, expanded in C++:
// run-tests.sh compiles this with -Wall -Wextra -Wold-style-cast -Werror,
// so that a C-style cast (or any other warning) inside the header's macros
// fails the build of a program that asks for those warnings.
#include <usertrace.h>

#include <utility>

USERTRACE_EVENT(ev, USERTRACE_FIELD_U8(a), USERTRACE_FIELD_U16(b), USERTRACE_FIELD_U32(c), USERTRACE_FIELD_U64(d),
                USERTRACE_FIELD_I8(e), USERTRACE_FIELD_I16(f), USERTRACE_FIELD_I32(g), USERTRACE_FIELD_I64(h),
                USERTRACE_FIELD_BOOL(i), USERTRACE_FIELD_F32(j), USERTRACE_FIELD_F64(k), USERTRACE_FIELD_CHARS(l, 4),
                USERTRACE_FIELD_STR(m), USERTRACE_FIELD_BYTES(n));
USERTRACE_EVENT0(ev0);
USERTRACE_SPAN(sp, USERTRACE_FIELD_U32(a));
USERTRACE_SPAN0(sp0);
USERTRACE_PROVIDER(casts, &ev, &ev0, &sp, &sp0);
USERTRACE_PROVIDER_FLAGS(casts_flags, USERTRACE_FLAG_MULTI_FORMAT, &ev);

USERTRACE_EVENT_DECLARE(shared_ev);
USERTRACE_SPAN_DECLARE(shared_sp);
USERTRACE_PROVIDER_DECLARE(casts_shared);
USERTRACE_EVENT_DEFINE(shared_ev, USERTRACE_FIELD_U32(a));
USERTRACE_EVENT_DEFINE0(shared_ev0);
USERTRACE_SPAN_DEFINE(shared_sp, USERTRACE_FIELD_STR(a));
USERTRACE_SPAN_DEFINE0(shared_sp0);
USERTRACE_PROVIDER_DEFINE(casts_shared, &shared_ev, &shared_ev0, &shared_sp, &shared_sp0);
USERTRACE_PROVIDER_DEFINE_FLAGS(casts_shared_flags, 0, &shared_ev);

extern "C" int every_macro(const uint32_t *word);

int every_macro(const uint32_t *word) {
  const unsigned char raw[2] = {1, 2};
  USERTRACE_EMIT(ev, usertrace_u8(1), usertrace_u16(2), usertrace_u32(3), usertrace_u64(4), usertrace_i8(-1),
                 usertrace_i16(-2), usertrace_i32(-3), usertrace_i64(-4), usertrace_bool(true), usertrace_f32(1.5f),
                 usertrace_f64(2.5), usertrace_str_n("abcd", 4), usertrace_str("m"), usertrace_bytes(raw, sizeof raw));
  USERTRACE_EMIT0(ev0);
  USERTRACE_EMIT(shared_ev, usertrace_u32(1));
  USERTRACE_EMIT0(shared_ev0);
  uint64_t id = USERTRACE_SPAN_BEGIN(sp, usertrace_u32(1));
  USERTRACE_SPAN_END(casts, id);
  USERTRACE_SPAN_END(casts, USERTRACE_SPAN_BEGIN0(sp0));
  usertrace_trace_context parent, mine;
  if (usertrace_trace_context_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &parent) == USERTRACE_OK) {
    USERTRACE_SPAN_END(casts, USERTRACE_SPAN_BEGIN_IN(sp, &parent, &mine, usertrace_u32(2)));
    USERTRACE_SPAN_END(casts, USERTRACE_SPAN_BEGIN_IN0(sp0, NULL, &mine));
  }
  {
    USERTRACE_SPAN_SCOPED(casts_shared, shared_sp, usertrace_str("scoped"));
    USERTRACE_SPAN_SCOPED0(casts_shared, shared_sp0);
  }
  usertrace::span guard(casts, USERTRACE_SPAN_BEGIN0(sp0));
  usertrace::span moved(std::move(guard));
  (void)moved.end();
  (void)usertrace_provider_register(&casts_flags);
  (void)usertrace_provider_register(&casts_shared_flags);
  return (USERTRACE_ENABLED(ev) ? 1 : 0) + (USERTRACE_ENABLED(shared_ev) ? 1 : 0) + (USERTRACE_WORD_ENABLED(word) ? 1 : 0);
}
