package dev.usertrace.opentelemetry;

/** A {@code Span} message's kind (field 6, OTLP's SpanKind numbers). */
final class SpanKindField {
    static final long SERVER = 2;
    static final long CLIENT = 3;

    private SpanKindField() {}

    static long of(byte[] span) {
        Protobuf p = new Protobuf(span);
        while (p.next()) {
            if (p.field() == 6 && p.wireType() == Protobuf.VARINT) {
                return p.number();
            }
        }
        return 0;
    }
}
