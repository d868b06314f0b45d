/* The control of the dlclose test over shared memory: plugin.c's library,
 * with its provider written out by hand rather than with USERTRACE_PROVIDER,
 * so it has no destructor and nothing releases its event at dlclose (as a
 * library that forgets usertrace_provider_release before it is unloaded).
 * Its slot in the registry stays live, so the recorder's clear at its end
 * still writes the unloaded word: the test must see its canary change,
 * which proves it can catch the hazard. */
#include <usertrace.h>

USERTRACE_EVENT(ev, USERTRACE_FIELD_U32(n));
static usertrace_event *const events[] = {&ev, NULL};
/* Event cleak_ev; no span, so no span_end event. */
static const usertrace_provider cleak = {"cleak", events, 0, NULL};

int plugin_register(void) { return usertrace_provider_register(&cleak); }
const uint32_t *plugin_word(void) { return &ev.enabled; }
void plugin_emit(uint32_t n) { USERTRACE_EMIT(ev, usertrace_u32(n)); }
