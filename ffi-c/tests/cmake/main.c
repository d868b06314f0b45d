/* Built through find_package(usertrace) (CMakeLists.txt beside it). Without
 * user_events registration fails with USERTRACE_ERR_UNAVAILABLE and emits do
 * nothing; with it, registration succeeds. Either way every call returns
 * what it should, and the program says so and exits 0. */
#include <stdio.h>
#include <usertrace.h>

USERTRACE_EVENT(hello, USERTRACE_FIELD_U32(n), USERTRACE_FIELD_STR(who));
USERTRACE_PROVIDER(cmake_app, &hello);

int main(void) {
  const usertrace_value v[2] = {usertrace_u32(1), usertrace_str("cmake")};
  usertrace_result reg = usertrace_provider_register(&cmake_app);
  usertrace_result emit = usertrace_event_emit(&hello, v, 2);
  USERTRACE_EMIT(hello, usertrace_u32(2), usertrace_str("macro"));
  if ((reg != USERTRACE_OK && reg != USERTRACE_ERR_UNAVAILABLE) || emit != USERTRACE_OK) {
    fprintf(stderr, "cmake app: register %d (%s), emit %d\n", reg, usertrace_error_string(reg), emit);
    return 1;
  }
  printf("cmake app: register %s, emit ok\n", reg == USERTRACE_OK ? "ok" : "unavailable");
  return 0;
}
