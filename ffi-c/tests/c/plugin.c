/* A shared library with tracepoints, for the dlclose test. */
#include <usertrace.h>

USERTRACE_EVENT(ev, USERTRACE_FIELD_U32(n));
USERTRACE_PROVIDER(cplug, &ev); /* event cplug_ev; released by a destructor at dlclose */

int plugin_register(void) { return usertrace_provider_register(&cplug); }
const uint32_t *plugin_word(void) { return &ev.enabled; }
void plugin_emit(uint32_t n) { USERTRACE_EMIT(ev, usertrace_u32(n)); }
