package dev.usertrace.opentelemetry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;

/**
 * A protobuf message's content, independent of its encoding: the Collector
 * writes fields in descending order and spells an empty parent id, where the
 * Java SDK writes them ascending and leaves it out; the content is the same.
 * Fields are ordered by number (repeated ones keep their order), proto3
 * defaults (0, empty) are left out, and a length-delimited value that parses
 * as a message is compared as one, recursively.
 */
final class Canonical {
    private Canonical() {}

    static String of(byte[] message) {
        String parsed = parse(message);
        return parsed == null ? "0x" + HexFormat.of().formatHex(message) : parsed;
    }

    /** The canonical form, or null if the bytes are no message. */
    private static String parse(byte[] message) {
        record Field(int number, String value) {}
        List<Field> fields = new ArrayList<>();
        try {
            Protobuf p = new Protobuf(message);
            while (p.next()) {
                String value = switch (p.wireType()) {
                    case Protobuf.LEN -> {
                        byte[] bytes = p.bytes();
                        yield bytes.length == 0 ? null : "{" + of(bytes) + "}";
                    }
                    default -> p.number() == 0 ? null : Long.toString(p.number());
                };
                if (value != null) {
                    fields.add(new Field(p.field(), value));
                }
            }
        } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
            return null;
        }
        if (fields.stream().anyMatch(f -> f.number() <= 0)) {
            return null;
        }
        fields.sort(Comparator.comparingInt(Field::number)); // stable: repeated fields keep their order
        StringBuilder s = new StringBuilder();
        for (Field f : fields) {
            s.append(f.number()).append('=').append(f.value()).append(' ');
        }
        return s.toString();
    }
}
