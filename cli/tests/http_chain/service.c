/* One service of the HTTP chain (cli/tests/http_chain/mod.rs), in C on
 * the C API alone: plain sockets and a parser for exactly the requests
 * this test sends.
 *
 *   service PROVIDER NEXT_URL COUNT
 *
 * Says `port=N` once its span is registered and it listens on 127.0.0.1
 * (port 0: the kernel picks). Then, COUNT times: takes one GET, reads its
 * `traceparent` (usertrace_trace_context_parse), begins the span
 * `PROVIDER_handle` under it, calls NEXT_URL (http://127.0.0.1:PORT/PATH)
 * with the span's own `traceparent` (usertrace_trace_context_format), ends
 * the span, answers with the next service's reply and prints
 * `span trace=T span=S parent=P` (hex; `-` for no parent). */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <usertrace.h>

static void die(const char *what) {
  char why[256] = "";
  usertrace_last_error(why, sizeof why, NULL);
  fprintf(stderr, "service: %s failed: %s\n", what, why);
  exit(1);
}

/* Reads until the end of the headers (and, for a reply, to EOF) into buf. */
static size_t read_request(int fd, char *buf, size_t cap, int to_eof) {
  size_t n = 0;
  for (;;) {
    ssize_t got = read(fd, buf + n, cap - 1 - n);
    if (got <= 0) break;
    n += (size_t)got;
    buf[n] = '\0';
    if (!to_eof && strstr(buf, "\r\n\r\n") != NULL) break;
    if (n == cap - 1) break;
  }
  buf[n] = '\0';
  return n;
}

/* The value of header `name` (any case) in the request `buf`, cut at the
 * line's end; NULL without it. */
static char *header(char *buf, const char *name) {
  size_t len = strlen(name);
  for (char *line = strstr(buf, "\r\n"); line != NULL; line = strstr(line, "\r\n")) {
    line += 2;
    if (strncasecmp(line, name, len) == 0 && line[len] == ':') {
      char *value = line + len + 1, *end = strstr(value, "\r\n");
      if (end != NULL) *end = '\0';
      return value;
    }
  }
  return NULL;
}

/* GET http://127.0.0.1:PORT/PATH with the header `traceparent` (unless
 * NULL); the reply's body into `body`. */
static void get(int port, const char *path, const char *traceparent, char *body, size_t cap) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) != 0) die("connect");
  char request[512];
  int n = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s%sConnection: close\r\n\r\n", path, port,
                   traceparent ? "traceparent: " : "", traceparent ? traceparent : "", traceparent ? "\r\n" : "");
  if (write(fd, request, (size_t)n) != n) die("write");
  char reply[4096];
  read_request(fd, reply, sizeof reply, 1);
  close(fd);
  char *start = strstr(reply, "\r\n\r\n");
  snprintf(body, cap, "%s", start ? start + 4 : "");
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PROVIDER NEXT_URL COUNT\n", argv[0]);
    return 2;
  }
  int next_port;
  char next_path[256];
  if (sscanf(argv[2], "http://127.0.0.1:%d%255s", &next_port, next_path) != 2) {
    fprintf(stderr, "service: NEXT_URL is http://127.0.0.1:PORT/PATH, not %s\n", argv[2]);
    return 2;
  }
  int count = atoi(argv[3]);
  usertrace_tracepoint *handle, *end;
  if (usertrace_tracepoint_new_span(argv[1], "handle", NULL, 0, 0, &handle) != USERTRACE_OK) die("the span");
  if (usertrace_tracepoint_new_span_end(argv[1], 0, &end) != USERTRACE_OK) die("the span's end");
  if (usertrace_tracepoint_register(handle) != USERTRACE_OK || usertrace_tracepoint_register(end) != USERTRACE_OK) die("register");

  int server = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = 0};
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t at_len = sizeof at;
  if (server < 0 || bind(server, (struct sockaddr *)&at, sizeof at) != 0 || listen(server, 8) != 0) die("listen");
  getsockname(server, (struct sockaddr *)&at, &at_len);
  printf("port=%d\n", ntohs(at.sin_port));
  fflush(stdout);

  for (int i = 0; i < count; i++) {
    int fd = accept(server, NULL, NULL);
    if (fd < 0) die("accept");
    char request[4096];
    read_request(fd, request, sizeof request, 0);
    usertrace_trace_context parent, mine;
    const usertrace_trace_context *under = NULL; /* NULL: a new trace */
    const char *value = header(request, "traceparent");
    if (value != NULL && usertrace_trace_context_parse(value, &parent) == USERTRACE_OK) under = &parent;
    uint64_t id = 0;
    usertrace_tracepoint_begin_span_in(handle, under, NULL, 0, &id, &mine);
    char traceparent[USERTRACE_TRACEPARENT_SIZE];
    int has = usertrace_trace_context_format(&mine, traceparent, sizeof traceparent) == USERTRACE_OK;
    char body[1024];
    get(next_port, next_path, has ? traceparent : NULL, body, sizeof body);
    usertrace_tracepoint_end_span(end, id);
    char reply[1200];
    int n = snprintf(reply, sizeof reply, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen(body), body);
    if (write(fd, reply, (size_t)n) != n) die("reply");
    close(fd);
    if (under != NULL)
      printf("span trace=%016" PRIx64 "%016" PRIx64 " span=%016" PRIx64 " parent=%016" PRIx64 "\n", mine.trace_id_hi, mine.trace_id_lo,
             mine.span_id, parent.span_id);
    else
      printf("span trace=%016" PRIx64 "%016" PRIx64 " span=%016" PRIx64 " parent=-\n", mine.trace_id_hi, mine.trace_id_lo, mine.span_id);
    fflush(stdout);
  }
  close(server);
  usertrace_tracepoint_free(handle);
  usertrace_tracepoint_free(end);
  return 0;
}
