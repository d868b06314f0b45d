/* The API's contract without a tracer: NULL and invalid arguments give
 * error codes (never a crash), messages are there, the disabled path
 * evaluates no argument. Runs on any kernel, under ASan. */
#include <string.h>

#include "check.h"

USERTRACE_EVENT(plain, USERTRACE_FIELD_U32(n), USERTRACE_FIELD_STR(msg));
USERTRACE_EVENT0(bare);
USERTRACE_PROVIDER(capi, &plain, &bare);

USERTRACE_EVENT(bad, USERTRACE_FIELD_U32(n));
static usertrace_event *const bad_events[] = {&bad, NULL};
static const usertrace_provider bad_provider = {"bad:name", bad_events, 0, NULL};
/* A bad event name under a good provider: the same code as from
 * usertrace_tracepoint_new, since one rule checks both. */
static const usertrace_field one_u32[] = {USERTRACE_FIELD_U32(n)};
static usertrace_event bad_event_name = {0, 1, USERTRACE_KIND_EVENT, "bad event", one_u32, NULL};
static usertrace_event *const bad_name_events[] = {&bad_event_name, NULL};
static const usertrace_provider bad_event_provider = {"good", bad_name_events, 0, NULL};
static const usertrace_provider no_events = {"x", NULL, 0, NULL};

static int evaluated;
static uint32_t side_effect(void) { return (uint32_t)++evaluated; }

int main(void) {
  char buf[512];
  size_t n = 12345;
  const usertrace_field fields[] = {USERTRACE_FIELD_U32(a), USERTRACE_FIELD_STR(b)};
  const usertrace_field bad_field[] = {{"a b", USERTRACE_TYPE_U32, 0}};
  const usertrace_field bad_type[] = {{"a", 99, 0}};
  const usertrace_field big_chars[] = {USERTRACE_FIELD_CHARS(c, 1025)};
  const usertrace_field empty_chars[] = {USERTRACE_FIELD_CHARS(c, 0)};
  const usertrace_field twice[] = {USERTRACE_FIELD_U32(a), USERTRACE_FIELD_U64(a)};
  usertrace_tracepoint *tp = NULL;
  int available = registrations_succeed();

  /* Status: a verdict and a sentence. */
  int st = usertrace_status(buf, sizeof buf, &n);
  CHECK(st >= USERTRACE_AVAILABLE && st <= USERTRACE_OPEN_FAILED);
  CHECK(n > 0 && n == strlen(buf) && strstr(buf, "user_events") != NULL);
  {
    /* A short buffer: truncated and NUL-terminated, and, as with snprintf,
     * `n` is the full length, so that n + 1 bytes hold it all. */
    size_t full = strlen(buf), asked = 0;
    char *all;
    CHECK(full > 8);
    CHECK(usertrace_status(buf, 8, &n) == st && n == full && strlen(buf) == 7);
    CHECK(usertrace_status(NULL, 0, &asked) == st && asked == full);
    all = (char *)malloc(asked + 1);
    REQUIRE(all != NULL);
    CHECK(usertrace_status(all, asked + 1, &n) == st && n == full && strlen(all) == full);
    free(all);
  }

  /* The transport: the one USERTRACE_TRANSPORT forces, else user_events
   * where it is usable (tests/c/transport.c checks each setting). */
  {
    usertrace_transport_kind transport = -1;
    const char *setting = getenv("USERTRACE_TRANSPORT");
    CHECK_RESULT(usertrace_transport(&transport, buf, sizeof buf, &n), USERTRACE_OK);
    CHECK(n > 0 && n == strlen(buf) && strstr(buf, "USERTRACE_TRANSPORT") != NULL);
    if (setting && strcmp(setting, "shm") == 0) CHECK(transport == USERTRACE_TRANSPORT_SHM);
    if (st == USERTRACE_AVAILABLE) CHECK(transport == USERTRACE_TRANSPORT_USER_EVENTS || (setting && strcmp(setting, "shm") == 0));
  }

  /* Error strings: static, never NULL. */
  CHECK(strcmp(usertrace_error_string(USERTRACE_OK), "success") == 0);
  CHECK(strstr(usertrace_error_string(USERTRACE_ERR_INVALID_NAME), "name") != NULL);
  CHECK(strstr(usertrace_error_string(-5), "unknown") != NULL);
  CHECK(usertrace_error_string(USERTRACE_ERR_PANIC) != NULL);

  /* NULL arguments. */
  CHECK_RESULT(usertrace_tracepoint_new(NULL, fields, 2, 0, &tp), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new("x", fields, 2, 0, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_new("x", NULL, 2, 0, &tp), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK(tp == NULL); /* out-params are written only on success */
  CHECK_RESULT(usertrace_tracepoint_register(NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_unregister(NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_tracepoint_emit(NULL, NULL, 0), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_event_emit(NULL, NULL, 0), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_provider_register(NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_provider_unregister(NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_provider_release(NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK(usertrace_tracepoint_enabled(NULL) == false);
  CHECK(usertrace_tracepoint_enable_word(NULL) == NULL);
  usertrace_tracepoint_free(NULL);
  CHECK_RESULT(usertrace_last_error(NULL, 10, &n), USERTRACE_ERR_NULL_ARGUMENT);

  /* The last error names the argument; a short buffer truncates. */
  CHECK_RESULT(usertrace_tracepoint_new("x", fields, 2, 0, NULL), USERTRACE_ERR_NULL_ARGUMENT);
  CHECK_RESULT(usertrace_last_error(buf, sizeof buf, &n), USERTRACE_OK);
  CHECK(strcmp(buf, "out must not be NULL") == 0 && n == strlen(buf));
  CHECK_RESULT(usertrace_last_error(buf, 4, &n), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(buf, "out") == 0 && n == strlen("out must not be NULL"));
  /* The size alone, as snprintf(NULL, 0, ...) gives it; then exactly enough. */
  n = 0;
  CHECK_RESULT(usertrace_last_error(NULL, 0, &n), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(n == strlen("out must not be NULL"));
  {
    char *exact = (char *)malloc(n + 1);
    REQUIRE(exact != NULL);
    CHECK_RESULT(usertrace_last_error(exact, n + 1, &n), USERTRACE_OK);
    CHECK(strcmp(exact, "out must not be NULL") == 0);
    free(exact);
  }

  /* Invalid definitions. */
  CHECK_RESULT(usertrace_tracepoint_new("a:b", fields, 2, 0, &tp), USERTRACE_ERR_INVALID_NAME);
  usertrace_last_error(buf, sizeof buf, NULL);
  CHECK(strstr(buf, "ASCII letters") != NULL);
  CHECK_RESULT(usertrace_tracepoint_new("", fields, 2, 0, &tp), USERTRACE_ERR_INVALID_NAME);
  CHECK_RESULT(usertrace_tracepoint_new("ok", bad_field, 1, 0, &tp), USERTRACE_ERR_INVALID_NAME);
  CHECK_RESULT(usertrace_tracepoint_new("ok", bad_type, 1, 0, &tp), USERTRACE_ERR_UNKNOWN_FIELD_TYPE);
  usertrace_last_error(buf, sizeof buf, NULL);
  CHECK(strstr(buf, "field a of event ok has unknown type number 99") != NULL);
  CHECK_RESULT(usertrace_tracepoint_new("ok", big_chars, 1, 0, &tp), USERTRACE_ERR_INVALID_FORMAT);
  CHECK_RESULT(usertrace_tracepoint_new("ok", empty_chars, 1, 0, &tp), USERTRACE_ERR_EMPTY_CHAR_ARRAY);
  usertrace_last_error(buf, sizeof buf, NULL);
  CHECK(strstr(buf, "char[0]") != NULL && strstr(buf, "N from 1 to 1024") != NULL);
  CHECK_RESULT(usertrace_tracepoint_new("ok", twice, 2, 0, &tp), USERTRACE_ERR_DUPLICATE_FIELD);
  usertrace_last_error(buf, sizeof buf, NULL);
  CHECK(strcmp(buf, "event ok declares field a twice; give each field its own name") == 0);
  CHECK_RESULT(usertrace_tracepoint_new("ok", fields, 33, 0, &tp), USERTRACE_ERR_TOO_MANY_FIELDS);
  usertrace_last_error(buf, sizeof buf, NULL);
  CHECK(strstr(buf, "event ok declares 33 fields; at most 32") != NULL);
  /* A garbage count (an uninitialised variable) is an error, read nothing
   * and allocated nothing: not an out-of-memory abort. */
  CHECK_RESULT(usertrace_tracepoint_new("ok", fields, (size_t)-1 / 2, 0, &tp), USERTRACE_ERR_TOO_MANY_FIELDS);
  CHECK_RESULT(usertrace_tracepoint_new("ok", fields, 2, 0x80, &tp), USERTRACE_ERR_INVALID_ARGUMENT);
  CHECK(tp == NULL);
  CHECK_RESULT(usertrace_provider_register(&bad_provider), USERTRACE_ERR_INVALID_NAME);
  CHECK_RESULT(usertrace_provider_register(&bad_event_provider), USERTRACE_ERR_INVALID_NAME);
  usertrace_last_error(buf, sizeof buf, NULL);
  CHECK(strstr(buf, "invalid event name") != NULL);
  CHECK(bad.registration == NULL && bad.enabled == 0);
  CHECK_RESULT(usertrace_provider_register(&no_events), USERTRACE_ERR_NULL_ARGUMENT);

  /* A dynamic tracepoint: made, registered if the kernel allows, freed. */
  CHECK_RESULT(usertrace_tracepoint_new("capi_dynamic", fields, 2, 0, &tp), USERTRACE_OK);
  REQUIRE(tp != NULL);
  CHECK(usertrace_tracepoint_enable_word(tp) != NULL);
  CHECK(!USERTRACE_WORD_ENABLED(usertrace_tracepoint_enable_word(tp)));
  CHECK_RESULT(usertrace_tracepoint_register(tp), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  if (!available) {
    usertrace_last_error(buf, sizeof buf, NULL);
    CHECK(strstr(buf, "not available") != NULL);
  }
  {
    usertrace_value v[2];
    v[0] = usertrace_u32(1);
    v[1] = usertrace_str("x");
    CHECK_RESULT(usertrace_tracepoint_emit(tp, v, 2), USERTRACE_OK); /* disabled: nothing written */
    CHECK_RESULT(usertrace_tracepoint_emit(tp, v, 1), USERTRACE_OK); /* nor checked */
    /* ...but validate checks, enabled or not, as an emit would. */
    CHECK_RESULT(usertrace_tracepoint_validate(tp, v, 2), USERTRACE_OK);
    CHECK_RESULT(usertrace_tracepoint_validate(tp, v, 1), USERTRACE_ERR_VALUE_MISMATCH);
    usertrace_last_error(buf, sizeof buf, NULL);
    CHECK(strcmp(buf, "event capi_dynamic has 2 fields but 1 values were given") == 0);
    v[1] = usertrace_u32(2);
    CHECK_RESULT(usertrace_tracepoint_validate(tp, v, 2), USERTRACE_ERR_VALUE_MISMATCH);
    usertrace_last_error(buf, sizeof buf, NULL);
    CHECK(strcmp(buf, "field b of event capi_dynamic is string, but a u32 was given") == 0);
    CHECK_RESULT(usertrace_tracepoint_validate(NULL, v, 2), USERTRACE_ERR_NULL_ARGUMENT);
  }
  CHECK_RESULT(usertrace_tracepoint_unregister(tp), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_unregister(tp), USERTRACE_OK);
  usertrace_tracepoint_free(tp);

  /* Static events: disabled before and after registration, and the
   * disabled path evaluates no value. */
  CHECK(!USERTRACE_ENABLED(plain));
  CHECK(plain.enabled == 0 && plain.registration == NULL);
  CHECK_RESULT(usertrace_provider_register(&capi), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  CHECK_RESULT(usertrace_provider_register(&capi), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  CHECK(!USERTRACE_ENABLED(plain) && !USERTRACE_ENABLED(bare));
  CHECK(plain.registration != NULL);
  USERTRACE_EMIT(plain, usertrace_u32(side_effect()), usertrace_str("never"));
  USERTRACE_EMIT0(bare);
  CHECK(evaluated == 0);
  CHECK_RESULT(usertrace_provider_unregister(&capi), USERTRACE_OK);
  CHECK(!USERTRACE_ENABLED(plain));
  CHECK_RESULT(usertrace_provider_release(&capi), USERTRACE_OK);
  CHECK(plain.registration == NULL);
  /* Registering again after a release works (the destructor releases once more). */
  CHECK_RESULT(usertrace_provider_register(&capi), available ? USERTRACE_OK : USERTRACE_ERR_UNAVAILABLE);
  return check_done("api_errors");
}
