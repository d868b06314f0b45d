/* An event emitted three calls deep, for perf's --call-graph fp: main ->
 * outer -> middle -> inner -> the library's emit -> writev. Built with
 * frame pointers; the library keeps its own (.cargo/config.toml), so the
 * walk from the kernel reaches main.
 *
 *   frames COUNT   emits COUNT times, 100 ms apart, once a tracer enables
 *                  ctest_frame_hit (at most 30 s after it registered) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <usertrace.h>

USERTRACE_EVENT(frame_hit, USERTRACE_FIELD_U32(n));
USERTRACE_PROVIDER(ctest, &frame_hit);

/* Not inlined, cloned or merged: each is a frame of its own name. The
 * empty asm after each call keeps it from being a tail call. */
__attribute__((noinline, noclone)) static void inner(unsigned n) {
  USERTRACE_EMIT(frame_hit, usertrace_u32(n));
  __asm__ volatile("");
}
__attribute__((noinline, noclone)) static void middle(unsigned n) {
  inner(n);
  __asm__ volatile("");
}
__attribute__((noinline, noclone)) static void outer(unsigned n) {
  middle(n);
  __asm__ volatile("");
}

int main(int argc, char **argv) {
  unsigned count = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
  char why[256];
  if (usertrace_provider_register(&ctest) != USERTRACE_OK) {
    usertrace_last_error(why, sizeof why, NULL);
    fprintf(stderr, "frames: %s\n", why);
    return 1;
  }
  for (int i = 0; i < 3000 && !USERTRACE_ENABLED(frame_hit); i++) usleep(10000);
  for (unsigned i = 0; i < count; i++) {
    outer(i);
    usleep(100000);
  }
  return 0;
}
