/* usertrace.h included twice in one translation unit, as happens when a
 * program's own headers each include it: the include guard must cover the
 * whole header, the inline value constructors of the trailer too. Built as
 * C and as C++ (run-tests.sh), then run. */
#include <usertrace.h>
#include <usertrace.h>

USERTRACE_EVENT(twice, USERTRACE_FIELD_U8(a), USERTRACE_FIELD_STR(b));
USERTRACE_PROVIDER(inc2, &twice);

int main(void) {
  usertrace_value v = usertrace_u8(7);
  (void)usertrace_provider_register(&inc2); /* fails harmlessly without user_events */
  USERTRACE_EMIT(twice, usertrace_u8(1), usertrace_str("x"));
  return v.type == USERTRACE_TYPE_U8 && v.as.u == 7 ? 0 : 1;
}
