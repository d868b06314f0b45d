/* dlclose_main.c's test over shared memory (run with USERTRACE_TRANSPORT=shm).
 * There the recorder writes the enable word, with process_vm_writev, and it
 * writes it last when its recording ends, to clear it. So this program
 * starts the recorder itself, to end it while the program still runs:
 *   1. start `RECORDER record -e EVENT -o OUTPUT` before any registration
 *      (a fork after one gives the child, until its exec, a registry of its
 *      own: a copy of ours, which the recorder would find too);
 *   2. dlopen LIBRARY, register its event, wait until the recorder enables
 *      it, emit one event with a known value;
 *   3. dlclose the library, then fill what its word was with canaries: the
 *      word's page, mapped again, and heap blocks, as dlclose_main.c does;
 *   4. go on while the recorder rescans the registry (every 100 ms), then
 *      stop it (SIGINT, as Ctrl-C) and wait for it: at its end it clears
 *      every word it set, the unloaded library's too;
 *   5. count the canary bytes that changed.
 * With libcplug.so (USERTRACE_PROVIDER) the destructor freed the event's
 * slot at dlclose, so the recorder's clear is refused and the canaries stay
 * intact; with libcleak.so (the control, a provider without a destructor)
 * the slot is still live and the clear lands on the canary page. The
 * program writes its pid to PIDFILE, for the check of OUTPUT: exactly the
 * one event, with its value, under this pid.
 *   dlclose_shm_main RECORDER LIBRARY EVENT intact|modified OUTPUT PIDFILE */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "canaries.h"
#include "check.h"
#include "plugin_handle.h"
#include "wait.h"

/* The event's value: one the recording can only have from this emit. */
#define VALUE 0xC0DE5EEDu
/* Longer than the recorder's rescan period (100 ms) five times over. */
#define RESCANS_MS 600

static pid_t recorder;

/* The recorder stopped, if it still runs, on every way out (REQUIRE exits):
 * its --duration bounds it too. */
static void stop_recorder(void) {
  if (recorder > 0) {
    kill(recorder, SIGTERM);
    waitpid(recorder, NULL, 0);
    recorder = 0;
  }
}

static pid_t start_recorder(const char *cli, const char *event, const char *output) {
  pid_t parent = getpid();
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    /* Gone with this program, whatever becomes of it. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    execl(cli, cli, "record", "--format", "json", "-e", event, "--duration", "120", "-o", output, (char *)NULL);
    fprintf(stderr, "dlclose_shm_main: exec %s: %s\n", cli, strerror(errno));
    _exit(127);
  }
  /* Where Yama's ptrace_scope is 1, a child may not write its parent's
   * memory unless the parent says so (EINVAL without Yama: nothing to do). */
  prctl(PR_SET_PTRACER, (unsigned long)child, 0, 0, 0);
  return child;
}

/* Whether the recorder still runs; says how it ended if not. */
static int recorder_running(void) {
  int status = 0;
  pid_t r = waitpid(recorder, &status, WNOHANG);
  if (r == 0) return 1;
  fprintf(stderr, "dlclose_shm_main: the recorder ended early (status %#x)\n", status);
  recorder = 0;
  return 0;
}

/* Waits up to `seconds` for `word` to be set, while the recorder runs. */
static int wait_enabled_by_recorder(const uint32_t *word, int seconds) {
  for (int i = 0; i < seconds; i++) {
    if (wait_enabled(word, 1)) return 1;
    if (!recorder_running()) return 0;
  }
  return 0;
}

int main(int argc, char **argv) {
  REQUIRE(argc == 7);
  const char *cli = argv[1], *library = argv[2], *event = argv[3], *output = argv[5], *pidfile = argv[6];
  int expect_intact = strcmp(argv[4], "intact") == 0;
  const char *transport = getenv("USERTRACE_TRANSPORT");
  if (!transport || strcmp(transport, "shm") != 0) {
    fprintf(stderr, "dlclose_shm_main: run with USERTRACE_TRANSPORT=shm\n");
    return 1;
  }
  REQUIRE(atexit(stop_recorder) == 0);
  recorder = start_recorder(cli, event, output);

  struct plugin plugin = plugin_open(library);
  CHECK_RESULT((usertrace_result)plugin.register_events(), USERTRACE_OK);
  REQUIRE(check_failures == 0);
  const uint32_t *word = plugin.word();
  /* The event works while loaded. */
  REQUIRE(wait_enabled_by_recorder(word, 60));
  plugin.emit(VALUE);

  plugin_close(&plugin, library);
  static struct canaries canaries;
  canaries_lay(&canaries, word, "dlclose_shm_main");

  /* The recorder rescans the registry, which changed, while we wait; it must
   * still run after, or its end below would not be while we run. */
  sleep_ms(RESCANS_MS);
  REQUIRE(recorder_running());
  fprintf(stderr, "dlclose_shm_main: %ld canary byte(s) changed while the recorder rescanned\n",
          canaries_changed(&canaries));
  /* Its end: it clears the words it set, then writes OUTPUT and exits. */
  REQUIRE(kill(recorder, SIGINT) == 0);
  int status;
  REQUIRE(waitpid(recorder, &status, 0) == recorder);
  recorder = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "dlclose_shm_main: the recorder ended with status %#x\n", status);
    CHECK(0);
  }

  long changed = canaries_changed(&canaries);
  fprintf(stderr, "dlclose_shm_main: %ld canary byte(s) changed by the time the recorder of %s ended\n", changed, event);
  CHECK(expect_intact ? changed == 0 : changed > 0);
  canaries_free(&canaries);

  FILE *f = fopen(pidfile, "w");
  REQUIRE(f != NULL);
  fprintf(f, "%ld\n", (long)getpid());
  REQUIRE(fclose(f) == 0);
  return check_done("dlclose_shm_main");
}
