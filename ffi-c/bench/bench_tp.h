/* The LTTng-UST tracepoint provider of the benchmark: one 4-byte field. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER usertrace_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench_tp.h"

#if !defined(BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(usertrace_bench, ev, LTTNG_UST_TP_ARGS(uint32_t, v),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint32_t, v, v)))

#endif

#include <lttng/tracepoint-event.h>
