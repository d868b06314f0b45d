/* usertrace_status and usertrace_transport give the diagnosis `usertrace
 * status` gives, word for word (the core makes it once, for every language):
 *   diagnosis STATE MESSAGE TRANSPORT
 * with STATE, MESSAGE and TRANSPORT ("transport NAME: REASON") taken from
 * `usertrace status --format json` run with the same environment. */
#include <string.h>

#include "check.h"

/* The core's name of each USERTRACE_* availability value. */
static const char *state_name(int availability) {
  switch (availability) {
    case USERTRACE_AVAILABLE: return "available";
    case USERTRACE_TRACEFS_NOT_MOUNTED: return "tracefs_not_mounted";
    case USERTRACE_USER_EVENTS_MISSING: return "user_events_missing";
    case USERTRACE_PERMISSION_DENIED: return "permission_denied";
    case USERTRACE_OPEN_FAILED: return "open_failed";
    default: return "unknown";
  }
}

int main(int argc, char **argv) {
  char status[2048], transport[2048];
  size_t n = 0;
  int availability;
  REQUIRE(argc == 4);

  availability = usertrace_status(status, sizeof status, &n);
  REQUIRE(n < sizeof status);
  CHECK(strcmp(state_name(availability), argv[1]) == 0);
  CHECK(strcmp(status, argv[2]) == 0);
  CHECK_RESULT(usertrace_transport(NULL, transport, sizeof transport, &n), USERTRACE_OK);
  REQUIRE(n < sizeof transport);
  CHECK(strcmp(transport, argv[3]) == 0);
  if (check_failures) {
    fprintf(stderr, "C said:   %s\n          %s\n          %s\n", state_name(availability), status, transport);
    fprintf(stderr, "CLI said: %s\n          %s\n          %s\n", argv[1], argv[2], argv[3]);
  }
  return check_done("diagnosis");
}
