/* A C program with two tracepoints. Build it against an installed prefix:
 *   ffi-c/install.sh /opt/usertrace
 *   export PKG_CONFIG_PATH=/opt/usertrace/lib/pkgconfig
 *   cc -o example examples/c/main.c $(pkg-config --cflags --libs usertrace) -Wl,-rpath,/opt/usertrace/lib
 * (the .pc sets no run path: give one, or LD_LIBRARY_PATH, for a prefix
 * ld.so does not search) and watch it:
 *   usertrace record -e 'example_c_*' -- ./example --wait
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c99 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <usertrace.h>

USERTRACE_EVENT(request, USERTRACE_FIELD_U32(id), USERTRACE_FIELD_STR(path), USERTRACE_FIELD_F64(ms));
USERTRACE_EVENT0(shutdown);
USERTRACE_PROVIDER(example_c, &request, &shutdown); /* events example_c_request, example_c_shutdown */

int main(int argc, char **argv) {
  char why[512];
  int wait = argc > 1 && strcmp(argv[1], "--wait") == 0;
  usertrace_result r = usertrace_provider_register(&example_c);
  if (r != USERTRACE_OK) {
    usertrace_last_error(why, sizeof why, NULL);
    /* Not fatal: the tracepoints just stay disabled. */
    fprintf(stderr, "example: tracing off: %s\n", why);
  }
  /* With --wait, give a tracer up to 30 s to attach. */
  for (int i = 0; wait && r == USERTRACE_OK && !USERTRACE_ENABLED(request) && i < 3000; i++) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  for (uint32_t id = 1; id <= 3; id++) {
    USERTRACE_EMIT(request, usertrace_u32(id), usertrace_str("/index.html"), usertrace_f64(id * 1.5));
  }
  USERTRACE_EMIT0(shutdown);
  printf("example: done (tracing %s)\n", r == USERTRACE_OK ? "on" : "off");
  return 0;
}
