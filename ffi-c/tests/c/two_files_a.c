/* A program of two files that share events through a header
 * (two_files.h): this file defines the event hit, the span job and the
 * provider ctwo; two_files_b.c defines the event note. Both files emit
 * hit; this one emits note and begins job, which the other ends.
 *   two_files            both files see the same objects; registers (or
 *                        finds no user_events) and emits while nobody
 *                        listens, which writes nothing. Exits 0 either way.
 *   two_files IDS_FILE   once a tracer is attached, emits what
 *                        check_output.py record-two-files expects, and
 *                        writes the span's id to IDS_FILE. */
#include <string.h>

#include "check.h"
#include "two_files.h"
#include "wait.h"

USERTRACE_EVENT_DEFINE(hit, USERTRACE_FIELD_U32(n), USERTRACE_FIELD_STR(file));
USERTRACE_SPAN_DEFINE(job, USERTRACE_FIELD_U32(n));
USERTRACE_PROVIDER_DEFINE(ctwo, &hit, &note, &job); /* ctwo_hit, ctwo_note, ctwo_job, ctwo_span_end */

/* Everything once: from this file, from the other, and across them. */
static uint64_t emit_all(void) {
  uint64_t id;
  USERTRACE_EMIT(hit, usertrace_u32(1), usertrace_str("two_files_a.c"));
  two_files_b_emit_hit(2);
  USERTRACE_EMIT(note, usertrace_i64(-5), usertrace_str("two_files_a.c"));
  id = USERTRACE_SPAN_BEGIN(job, usertrace_u32(3));
  two_files_b_end_job(id);
  return id;
}

int main(int argc, char **argv) {
  /* One object each, whichever file defines it. */
  CHECK(two_files_b_hit() == &hit);
  CHECK(two_files_b_note() == &note);
  CHECK(two_files_b_job() == &job);
  CHECK(two_files_b_provider() == &ctwo);
  CHECK(ctwo.events[0] == &hit && ctwo.events[1] == &note && ctwo.events[2] == &job && ctwo.events[3] == NULL);
  CHECK(strcmp(ctwo.name, "ctwo") == 0 && strcmp(note.name, "note") == 0 && note.field_count == 2);
  CHECK(hit.kind == USERTRACE_KIND_EVENT && job.kind == USERTRACE_KIND_SPAN && job.field_count == 1);
  if (argc < 2) {
    usertrace_result r = usertrace_provider_register(&ctwo);
    CHECK(r == USERTRACE_OK || r == USERTRACE_ERR_UNAVAILABLE);
    /* Nobody listens: nothing is written, and the span has no id. */
    CHECK(!USERTRACE_ENABLED(hit) && !USERTRACE_ENABLED(note) && !USERTRACE_ENABLED(job));
    CHECK(emit_all() == 0);
    printf("two_files: one hit at %p in both files; register: %s\n", (void *)&hit, usertrace_error_string(r));
    return check_done("two_files");
  }

  FILE *ids = fopen(argv[1], "w");
  REQUIRE(ids != NULL);
  CHECK_RESULT(usertrace_provider_register(&ctwo), USERTRACE_OK);
  if (check_failures) return check_done("two_files");
  REQUIRE(wait_enabled(&hit.enabled, 60));
  REQUIRE(wait_enabled(&note.enabled, 60));
  REQUIRE(wait_enabled(&job.enabled, 60));
  REQUIRE(wait_enabled(&ctwo.span_end->enabled, 60));
  uint64_t id = emit_all();
  CHECK(id != 0);
  fprintf(ids, "%llu\n", (unsigned long long)id);
  fclose(ids);
  return check_done("two_files");
}
