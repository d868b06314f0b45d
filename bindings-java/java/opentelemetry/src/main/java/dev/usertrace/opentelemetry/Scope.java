package dev.usertrace.opentelemetry;

/** An OTLP {@code InstrumentationScope} message's name (1) and version (2). */
final class Scope {
    private Scope() {}

    static String[] of(Protobuf scope) {
        String[] nameAndVersion = {"", ""};
        while (scope.next()) {
            if (scope.wireType() == Protobuf.LEN && (scope.field() == 1 || scope.field() == 2)) {
                nameAndVersion[scope.field() - 1] = scope.string();
            }
        }
        return nameAndVersion;
    }
}
