package dev.usertrace;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Test helper: reads {@code name=value} pairs as ftrace or perf script print
 * them. The guest's ftrace prints wider integers as {@code 0xffff (65535)}
 * (the decimal signed or not by its own rules), one-byte ones as
 * {@code 'c'(99)}, {@code '?'(255)} or {@code (128)}; perf script prints
 * plain decimals. {@link #bits} reads any of them as the field's bits.
 */
final class Fields {
    private Fields() {}

    private static final Pattern PAIR = Pattern.compile("(\\w+)=(0x[0-9a-f]+ \\(-?\\d+\\)|(?:'[^']*')?\\(-?\\d+\\)|\\S*)");
    private static final Pattern HEX = Pattern.compile("0x([0-9a-f]+) \\(-?\\d+\\)");
    private static final Pattern PAREN = Pattern.compile("(?:'[^']*')?\\((-?\\d+)\\)");

    /** The fields of one printed event, raw; {@code last} is a string field that may hold spaces. */
    static Map<String, String> parse(String line, String last) {
        Map<String, String> out = new LinkedHashMap<>();
        String head = line;
        int at = line.indexOf(" " + last + "=");
        if (at < 0 && line.startsWith(last + "=")) {
            out.put(last, line.substring(last.length() + 1));
            head = "";
        } else if (at >= 0) {
            out.put(last, line.substring(at + last.length() + 2).stripTrailing());
            head = line.substring(0, at);
        }
        Matcher m = PAIR.matcher(head);
        while (m.find()) {
            out.putIfAbsent(m.group(1), m.group(2));
        }
        return out;
    }

    /** The low {@code width} bytes of a printed integer. */
    static long bits(String printed, int width) {
        long v;
        Matcher hex = HEX.matcher(printed);
        Matcher paren = PAREN.matcher(printed);
        if (hex.matches()) {
            v = Long.parseUnsignedLong(hex.group(1), 16);
        } else if (paren.matches()) {
            v = Long.parseLong(paren.group(1));
        } else if (printed.startsWith("-")) {
            v = Long.parseLong(printed);
        } else {
            v = Long.parseUnsignedLong(printed);
        }
        return width == 8 ? v : v & ((1L << (8 * width)) - 1);
    }
}
