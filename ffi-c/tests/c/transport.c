/* usertrace_transport under each USERTRACE_TRANSPORT (read once per
 * process, so one run per setting):
 *   transport user_events|shm|invalid
 * user_events and shm: that transport, a sentence naming the setting, and a
 * short buffer truncated as snprintf does. invalid (run with a value that is
 * none of auto, user_events, shm): USERTRACE_ERR_UNAVAILABLE, a sentence and
 * a last error naming the variable, its value and what it may be, and a
 * registration refused with the same code. */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  const char *want = argv[1], *setting = getenv("USERTRACE_TRANSPORT");
  char buf[512], last[512];
  size_t n = 0, full;
  usertrace_transport_kind transport = -1;
  REQUIRE(setting != NULL);

  if (strcmp(want, "invalid") == 0) {
    const usertrace_field fields[] = {USERTRACE_FIELD_U32(a)};
    usertrace_tracepoint *tp = NULL;
    CHECK_RESULT(usertrace_transport(&transport, buf, sizeof buf, &n), USERTRACE_ERR_UNAVAILABLE);
    CHECK(transport == -1); /* written only on success */
    CHECK(n == strlen(buf) && strstr(buf, "USERTRACE_TRANSPORT") && strstr(buf, setting) &&
          strstr(buf, "auto, user_events or shm"));
    CHECK_RESULT(usertrace_last_error(last, sizeof last, NULL), USERTRACE_OK);
    CHECK(strcmp(last, buf) == 0);
    /* Nothing registers under a setting nobody can act on. */
    CHECK_RESULT(usertrace_tracepoint_new("ctest_transport", fields, 1, 0, &tp), USERTRACE_OK);
    CHECK_RESULT(usertrace_tracepoint_register(tp), USERTRACE_ERR_UNAVAILABLE);
    CHECK_RESULT(usertrace_last_error(last, sizeof last, NULL), USERTRACE_OK);
    CHECK(strstr(last, "USERTRACE_TRANSPORT") != NULL);
    usertrace_tracepoint_free(tp);
    return check_done("transport invalid");
  }

  CHECK_RESULT(usertrace_transport(&transport, buf, sizeof buf, &n), USERTRACE_OK);
  CHECK(transport == (strcmp(want, "shm") == 0 ? USERTRACE_TRANSPORT_SHM : USERTRACE_TRANSPORT_USER_EVENTS));
  full = strlen(buf);
  CHECK(n == full && strstr(buf, "USERTRACE_TRANSPORT=") && strstr(buf, want));
  /* Truncated and NUL-terminated; NULL for what is not wanted. */
  CHECK_RESULT(usertrace_transport(NULL, buf, 8, &n), USERTRACE_OK);
  CHECK(n == full && strlen(buf) == 7);
  CHECK_RESULT(usertrace_transport(NULL, NULL, 0, NULL), USERTRACE_OK);
  return check_done(want);
}
