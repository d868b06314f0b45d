/* The second file of two_files (see two_files_a.c): it defines the event
 * note, and uses hit, job and ctwo, which two_files_a.c defines. Valid C
 * and C++: run-tests.sh also builds it as C++, linked with two_files_a.c
 * built as C. */
#include "two_files.h"

USERTRACE_EVENT_DEFINE(note, USERTRACE_FIELD_I64(v), USERTRACE_FIELD_STR(file));

#ifdef __cplusplus
#define TWO_FILES_B "two_files_b.c as C++"
#else
#define TWO_FILES_B "two_files_b.c"
#endif

const usertrace_event *two_files_b_hit(void) { return &hit; }
const usertrace_event *two_files_b_note(void) { return &note; }
const usertrace_event *two_files_b_job(void) { return &job; }
const usertrace_provider *two_files_b_provider(void) { return &ctwo; }

void two_files_b_emit_hit(uint32_t n) { USERTRACE_EMIT(hit, usertrace_u32(n), usertrace_str(TWO_FILES_B)); }

void two_files_b_end_job(uint64_t id) { USERTRACE_SPAN_END(ctwo, id); }
