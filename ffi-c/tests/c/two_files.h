/* The header of a program of two files, two_files_a.c and two_files_b.c
 * (which is also built as C++): the events, the span and the provider
 * they share, and what two_files_b.c does with them. */
#ifndef TWO_FILES_H
#define TWO_FILES_H
#include <usertrace.h>

USERTRACE_EVENT_DECLARE(hit);     /* ctwo_hit: defined in two_files_a.c, emitted by both */
USERTRACE_EVENT_DECLARE(note);    /* ctwo_note: defined in two_files_b.c, emitted by a */
USERTRACE_SPAN_DECLARE(job);      /* ctwo_job: defined in two_files_a.c, ended by b */
USERTRACE_PROVIDER_DECLARE(ctwo); /* defined in two_files_a.c */

#ifdef __cplusplus
extern "C" {
#endif
/* The objects as two_files_b.c sees them. */
const usertrace_event *two_files_b_hit(void);
const usertrace_event *two_files_b_note(void);
const usertrace_event *two_files_b_job(void);
const usertrace_provider *two_files_b_provider(void);
/* USERTRACE_EMIT(hit, n, "two_files_b.c"), or "two_files_b.c as C++". */
void two_files_b_emit_hit(uint32_t n);
/* USERTRACE_SPAN_END(ctwo, id). */
void two_files_b_end_job(uint64_t id);
#ifdef __cplusplus
}
#endif
#endif
