/* Emits known values of every field type, from a static and a dynamic
 * tracepoint, once a tracer is attached. The guest tests check what
 * `usertrace record` and `perf script` decode.
 *   emit_all [COUNT [PAUSE_MS]]   emits COUNT rounds (default 3), seq 1..COUNT */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wait.h"

USERTRACE_EVENT(all, USERTRACE_FIELD_U32(seq), USERTRACE_FIELD_U8(u8v), USERTRACE_FIELD_U16(u16v),
                USERTRACE_FIELD_U64(u64v), USERTRACE_FIELD_I8(i8v), USERTRACE_FIELD_I16(i16v),
                USERTRACE_FIELD_I32(i32v), USERTRACE_FIELD_I64(i64v), USERTRACE_FIELD_BOOL(flag),
                USERTRACE_FIELD_F32(f32v), USERTRACE_FIELD_F64(f64v), USERTRACE_FIELD_CHARS(tag, 8),
                USERTRACE_FIELD_STR(msg), USERTRACE_FIELD_BYTES(raw));
USERTRACE_PROVIDER(ctest, &all);

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 3;
  int pause_ms = argc > 2 ? atoi(argv[2]) : 0;
  const usertrace_field dyn_fields[] = {USERTRACE_FIELD_U32(seq), USERTRACE_FIELD_STR(name)};
  usertrace_tracepoint *dyn = NULL;
  const unsigned char raw[4] = {0xde, 0xad, 0xbe, 0xef};

  CHECK_RESULT(usertrace_provider_register(&ctest), USERTRACE_OK);
  CHECK_RESULT(usertrace_tracepoint_new("ctest_dyn", dyn_fields, 2, 0, &dyn), USERTRACE_OK);
  REQUIRE(dyn != NULL);
  CHECK_RESULT(usertrace_tracepoint_register(dyn), USERTRACE_OK);
  if (check_failures) {
    usertrace_tracepoint_free(dyn);
    return check_done("emit_all");
  }
  REQUIRE(wait_enabled(&all.enabled, 60));
  const uint32_t *dyn_word = usertrace_tracepoint_enable_word(dyn);
  REQUIRE(wait_enabled(dyn_word, 60));

  for (int i = 1; i <= count; i++) {
    uint32_t seq = (uint32_t)i;
    usertrace_value v[14];
    v[0] = usertrace_u32(seq);
    v[1] = usertrace_u8(200);
    v[2] = usertrace_u16(65000);
    v[3] = usertrace_u64(18446744073709551615ULL - seq);
    v[4] = usertrace_i8(-100);
    v[5] = usertrace_i16(-30000);
    v[6] = usertrace_i32(-2000000000);
    v[7] = usertrace_i64(-9000000000000000000LL - (int64_t)seq);
    v[8] = usertrace_bool(seq % 2 == 1);
    v[9] = usertrace_f32(1.5f);
    v[10] = usertrace_f64(-2.25 * seq);
    v[11] = usertrace_str("tag");
    v[12] = usertrace_str("h\xc3\xa9llo from C");
    v[13] = usertrace_bytes(raw, sizeof raw);
    CHECK_RESULT(usertrace_event_emit(&all, v, 14), USERTRACE_OK);
    /* The same through the macro, with seq + 1000. */
    USERTRACE_EMIT(all, usertrace_u32(seq + 1000), usertrace_u8(200), usertrace_u16(65000),
                   usertrace_u64(18446744073709551615ULL - seq), usertrace_i8(-100), usertrace_i16(-30000),
                   usertrace_i32(-2000000000), usertrace_i64(-9000000000000000000LL - (int64_t)seq),
                   usertrace_bool(seq % 2 == 1), usertrace_f32(1.5f), usertrace_f64(-2.25 * seq),
                   usertrace_str("tag"), usertrace_str("h\xc3\xa9llo from C"), usertrace_bytes(raw, sizeof raw));
    usertrace_value d[2];
    d[0] = usertrace_u32(seq);
    d[1] = usertrace_str_n("dynamicXXX", 7);
    CHECK_RESULT(usertrace_tracepoint_emit(dyn, d, 2), USERTRACE_OK);
    if (pause_ms) sleep_ms(pause_ms);
  }
  /* A wrong value is refused while enabled, and nothing is written. */
  {
    usertrace_value bad[2];
    bad[0] = usertrace_str("not a u32");
    bad[1] = usertrace_str("x");
    CHECK_RESULT(usertrace_tracepoint_emit(dyn, bad, 2), USERTRACE_ERR_VALUE_MISMATCH);
    CHECK_RESULT(usertrace_tracepoint_emit(dyn, bad, 1), USERTRACE_ERR_VALUE_MISMATCH);
    bad[0] = usertrace_u32(1);
    bad[1] = usertrace_str("\xff\xfe");
    CHECK_RESULT(usertrace_tracepoint_emit(dyn, bad, 2), USERTRACE_ERR_INVALID_ARGUMENT);
  }
  usertrace_tracepoint_free(dyn);
  return check_done("emit_all");
}
