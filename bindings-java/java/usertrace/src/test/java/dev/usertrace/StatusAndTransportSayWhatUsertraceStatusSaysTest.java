package dev.usertrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Usertrace#status()} and {@link Usertrace#transport()} give the
 * diagnosis {@code usertrace status} gives, word for word: the core makes it
 * once, for every language. The CLI is {@code -Dusertrace.cli} (run-tests.sh
 * passes it to Maven); without it the test is skipped.
 */
@Tag("host")
class StatusAndTransportSayWhatUsertraceStatusSaysTest {
    /** A JSON string's body: anything but a quote or a backslash, or an escape. */
    private static final String STRING = "\"((?:[^\"\\\\]|\\\\.)*)\"";

    /** {@code usertrace status --format json}, with USERTRACE_TRANSPORT unset (auto). */
    private static String cliStatus() throws Exception {
        String cli = System.getProperty("usertrace.cli");
        assumeTrue(cli != null && !cli.isEmpty(), "set -Dusertrace.cli to the usertrace CLI (cargo build -p usertrace-cli)");
        assertTrue(Files.isExecutable(Path.of(cli)), "-Dusertrace.cli is no program: " + cli);
        ProcessBuilder builder = new ProcessBuilder(cli, "status", "--format", "json").redirectErrorStream(true);
        builder.environment().remove("USERTRACE_TRANSPORT");
        Process p = builder.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "usertrace status did not exit");
        assertTrue(p.exitValue() == 0 || p.exitValue() == 1, out);
        return out;
    }

    /** The string fields {@code first} and {@code second} of the JSON object {@code object} in {@code json}. */
    private static List<String> fields(String json, String object, String first, String second) {
        Pattern p = Pattern.compile("\"" + object + "\":\\{[^{}]*?\"" + first + "\":" + STRING + ",\"" + second + "\":" + STRING);
        Matcher m = p.matcher(json);
        assertTrue(m.find(), object + " in " + json);
        return List.of(unescape(m.group(1)), unescape(m.group(2)));
    }

    /** What serde_json escapes in a string: quotes, backslashes, control characters. */
    private static String unescape(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'u' -> {
                    out.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    i += 4;
                }
                default -> out.append(e);
            }
        }
        return out.toString();
    }

    @Test
    void status_says_what_usertrace_status_says() throws Exception {
        List<String> cli = fields(cliStatus(), "user_events", "state", "message");
        Status s = Usertrace.status();
        assertEquals(cli, List.of(s.availability().name().toLowerCase(Locale.ROOT), s.message()));
    }

    @Test
    void transport_gives_the_reason_usertrace_status_gives() throws Exception {
        List<String> cli = fields(cliStatus(), "transport", "name", "reason");
        List<String> child = TransportSaysWhichWayEventsGoTest.transportInChild(null);
        assertEquals(List.of("transport=" + cli.get(0).toUpperCase(Locale.ROOT), "reason=" + cli.get(1)), child.subList(0, 2));
    }
}
