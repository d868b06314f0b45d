/* dlopen a shared library with tracepoints, register them, dlclose it,
 * then fill the memory it used with canaries and enable its event through
 * ftrace. Both libraries keep the enable word in their own .data. With
 * libusertrace the canaries stay intact (the provider's destructor
 * unregistered the event before the library was unmapped); with the
 * hand-made control library they change.
 *   dlclose_main LIBRARY EVENT intact|modified */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canaries.h"
#include "check.h"
#include "plugin_handle.h"
#include "wait.h"

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

int main(int argc, char **argv) {
  REQUIRE(argc == 4);
  const char *library = argv[1], *event = argv[2];
  int expect_intact = strcmp(argv[3], "intact") == 0;
  char enable_path[256];
  snprintf(enable_path, sizeof enable_path, "/sys/kernel/tracing/events/user_events/%s/enable", event);

  /* Keeps libusertrace's descriptor open, so the kernel keeps the plugin's
   * event alive after its unregistration and ftrace can still enable it. */
  const usertrace_field f[] = {USERTRACE_FIELD_U32(n)};
  usertrace_tracepoint *keeper = NULL;
  CHECK_RESULT(usertrace_tracepoint_new("ctest_keeper", f, 1, 0, &keeper), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_register(keeper), USERTRACE_OK);

  struct plugin plugin = plugin_open(library);
  REQUIRE(plugin.register_events() == 0);
  const uint32_t *word = plugin.word();
  /* The event works while loaded. */
  REQUIRE(write_file(enable_path, "1") == 0);
  REQUIRE(wait_enabled(word, 10));
  plugin.emit(1);
  REQUIRE(write_file(enable_path, "0") == 0);
  sleep_ms(100);
  REQUIRE(__atomic_load_n(word, __ATOMIC_RELAXED) == 0);

  plugin_close(&plugin, library);
  static struct canaries canaries;
  canaries_lay(&canaries, word, "dlclose_main");

  /* Enable the unloaded library's event from a consumer. */
  if (access(enable_path, F_OK) != 0) {
    fprintf(stderr, "dlclose_main: %s is gone\n", enable_path);
    REQUIRE(0);
  }
  REQUIRE(write_file(enable_path, "1") == 0);
  sleep_ms(500);
  long changed = canaries_changed(&canaries);
  write_file(enable_path, "0");
  fprintf(stderr, "dlclose_main: %ld canary byte(s) changed after enabling %s\n", changed, event);
  CHECK(expect_intact ? changed == 0 : changed > 0);
  canaries_free(&canaries);
  usertrace_tracepoint_free(keeper);
  return check_done("dlclose_main");
}
