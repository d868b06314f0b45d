/* The C stage of the four-language demo (harness/demo).
 *
 * Says `ready` on stdout once it and the stages after it are set up, then
 * reads requests (`ID TRACEPARENT PATH` lines) on stdin, handles each inside
 * a span demo_c_handle begun under the caller's traceparent, hands its own
 * to the next stage, asks the next stage (the command in its arguments: the
 * Python worker) through a pipe, and answers `ID RESULT` on stdout. See
 * examples/rust/src/bin/demo-front.rs for the whole chain.
 *
 *   service NEXT-STAGE-COMMAND...
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <usertrace.h>

USERTRACE_SPAN(handle, USERTRACE_FIELD_U64(request_id), USERTRACE_FIELD_STR(path));
USERTRACE_SPAN0(parse);
USERTRACE_EVENT(route, USERTRACE_FIELD_U64(request_id), USERTRACE_FIELD_U32(backend), USERTRACE_FIELD_I32(priority));
USERTRACE_PROVIDER(demo_c, &handle, &parse, &route); /* demo_c_handle, demo_c_parse, demo_c_route, demo_c_span_end */

/* Starts argv[0] with pipes on its stdin and stdout. */
static pid_t start_next(char **argv, FILE **to, FILE **from) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(down[0], 0);
    dup2(up[1], 1);
    close(down[0]), close(down[1]), close(up[0]), close(up[1]);
    execvp(argv[0], argv);
    perror("service: exec of the next stage");
    _exit(127);
  }
  close(down[0]), close(up[1]);
  *to = fdopen(down[1], "w");
  *from = fdopen(up[0], "r");
  return pid;
}

int main(int argc, char **argv) {
  char why[512], line[4096], reply[4096];
  if (argc < 2) {
    fprintf(stderr, "usage: service NEXT-STAGE-COMMAND...\n");
    return 2;
  }
  if (usertrace_provider_register(&demo_c) != USERTRACE_OK) {
    usertrace_last_error(why, sizeof why, NULL);
    fprintf(stderr, "service: tracing off: %s\n", why); /* not fatal */
  }
  FILE *to, *from;
  pid_t next = start_next(argv + 1, &to, &from);
  if (next < 0 || !to || !from) {
    perror("service: cannot start the next stage");
    return 1;
  }
  if (!fgets(reply, sizeof reply, from) || strcmp(reply, "ready\n") != 0) {
    fprintf(stderr, "service: the next stage did not say it was ready\n");
    return 1;
  }
  fputs(reply, stdout);
  fflush(stdout);
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    char *traceparent = strchr(line, ' ');
    if (!traceparent) continue;
    *traceparent++ = 0;
    char *path = strchr(traceparent, ' ');
    if (!path) continue;
    *path++ = 0;
    uint64_t id = strtoull(line, NULL, 10);
    usertrace_trace_context caller, mine;
    const usertrace_trace_context *under = usertrace_trace_context_parse(traceparent, &caller) == USERTRACE_OK ? &caller : NULL;
    uint64_t span = USERTRACE_SPAN_BEGIN_IN(handle, under, &mine, usertrace_u64(id), usertrace_str(path));
    char handed[USERTRACE_TRACEPARENT_SIZE] = "-";
    usertrace_trace_context_format(&mine, handed, sizeof handed); /* "-" stays: no context */
    {
      USERTRACE_SPAN_SCOPED0(demo_c, parse); /* ends at the end of this block */
      uint32_t backend = (uint32_t)(id % 3);
      USERTRACE_EMIT(route, usertrace_u64(id), usertrace_u32(backend), usertrace_i32(-(int32_t)backend));
    }
    fprintf(to, "%llu %s %s\n", (unsigned long long)id, handed, path);
    fflush(to);
    if (!fgets(reply, sizeof reply, from)) {
      fprintf(stderr, "service: no reply to request %llu\n", (unsigned long long)id);
      return 1;
    }
    USERTRACE_SPAN_END(demo_c, span);
    fputs(reply, stdout);
    fflush(stdout);
  }
  fclose(to);
  int status = 0;
  waitpid(next, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
