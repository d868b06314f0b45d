/* The header's version macros against the library's usertrace_version()
 * and the version cargo gives the crate, passed as the argument: all three
 * must be one version.
 *   version CARGO_VERSION */
#include <stdio.h>
#include <string.h>

#include "check.h"

#if !defined(USERTRACE_VERSION_MAJOR) || !defined(USERTRACE_VERSION_MINOR) || !defined(USERTRACE_VERSION_PATCH)
#error "usertrace.h lacks USERTRACE_VERSION_MAJOR, _MINOR or _PATCH"
#endif
/* Numbers that #if can compare. */
#if USERTRACE_VERSION_MAJOR < 0 || USERTRACE_VERSION_MINOR < 0 || USERTRACE_VERSION_PATCH < 0
#error "usertrace.h's version numbers are not numbers"
#endif

int main(int argc, char **argv) {
  char numbers[64];
  size_t n;
  const char *library = usertrace_version();
  REQUIRE(argc == 2);
  REQUIRE(library != NULL);
  snprintf(numbers, sizeof numbers, "%d.%d.%d", USERTRACE_VERSION_MAJOR, USERTRACE_VERSION_MINOR, USERTRACE_VERSION_PATCH);
  n = strlen(numbers);
  /* USERTRACE_VERSION is MAJOR.MINOR.PATCH, then any pre-release or build suffix. */
  CHECK(strncmp(USERTRACE_VERSION, numbers, n) == 0);
  CHECK(USERTRACE_VERSION[n] == '\0' || USERTRACE_VERSION[n] == '-' || USERTRACE_VERSION[n] == '+');
  CHECK(strcmp(USERTRACE_VERSION, argv[1]) == 0);
  CHECK(strcmp(library, argv[1]) == 0);
  /* Static: the same string every time. */
  CHECK(usertrace_version() == library);
  printf("version: header %s (%s), library %s, cargo %s\n", USERTRACE_VERSION, numbers, library, argv[1]);
  return check_done("version");
}
