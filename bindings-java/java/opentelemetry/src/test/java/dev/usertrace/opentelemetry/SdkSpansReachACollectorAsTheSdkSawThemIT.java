package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application on the SDK's autoconfiguration with
 * {@code otel.traces.exporter=usertrace,seen}, run under {@code usertrace
 * record --otlp} to a real Collector: every span the SDK exported arrives as
 * the {@code Span} message its OTLP exporter makes, field for field (the
 * Collector re-encodes it: {@link Canonical}), under its scope;
 * and so does a log record ({@code otel.logs.exporter=usertrace,seen}). Both
 * under the SDK's Resource (its service name and attributes from system
 * properties, which the recorder cannot read): its attributes exactly, then
 * only what the recorder adds of its own.
 *
 * <p>Over shared memory (USERTRACE_TRANSPORT=shm for the recorder and the
 * application), so it runs on a host without user_events; the guest's
 * emulated kernel is not needed for what it checks.
 */
@Tag("host")
class SdkSpansReachACollectorAsTheSdkSawThemIT {
    @TempDir
    Path dir;

    @Test
    void every_span_and_log_record_the_sdk_exported_arrives_exactly_under_its_scope() throws Exception {
        String provider = "jotel" + ProcessHandle.current().pid();
        Path seen = dir.resolve("seen.pb");
        Path seenLogs = dir.resolve("seen-logs.pb");
        try (Collector collector = Collector.start(dir)) {
            String console = Recorded.run(provider, collector.endpoint, dir, List.of(Cli.java(),
                    "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                    "-Dotel.traces.exporter=usertrace,seen", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=usertrace,seen",
                    "-Dotel.service.name=shop", "-Dotel.resource.attributes=deployment.tier=canary",
                    "-Dseen.file=" + seen, "-Dseen.logs.file=" + seenLogs,
                    "-cp", System.getProperty("java.class.path"), AutoconfiguredApp.class.getName()));
            List<OtlpFile.Arrived> sdk = sorted(OtlpFile.spans(seen));
            assertEquals(3, sdk.size(), "the SDK exported " + sdk + "\n" + console);
            List<OtlpFile.Arrived> arrived = sorted(collector.spans(sdk.size()));
            assertEquals(sdk, arrived, "console:\n" + console + "\ncollector:\n" + collector.log());

            String trace = Recorded.printed(console, "trace");
            List<String> names = new ArrayList<>();
            for (OtlpFile.Arrived a : arrived) {
                OtlpSpans.Span s = a.readable();
                assertEquals(trace, String.format("%016x%016x", s.traceIdHi(), s.traceIdLo()), a.toString());
                names.add(s.name() + "@" + a.scopeName());
            }
            assertEquals(List.of("GET /cart@shop.web", "SELECT cart@shop.db", "render@shop.web"),
                    names.stream().sorted().toList());
            OtlpSpans.Span root = byName(arrived, "GET /cart");
            assertEquals(0, root.parentSpanId());
            assertEquals(root.spanId(), byName(arrived, "SELECT cart").parentSpanId());
            assertEquals(root.spanId(), byName(arrived, "render").parentSpanId());

            // The log record, emitted in the request's span, likewise.
            List<OtlpFile.Arrived> sdkLogs = OtlpFile.spans(seenLogs);
            assertEquals(1, sdkLogs.size(), "the SDK exported " + sdkLogs + "\n" + console);
            assertEquals(sdkLogs, collector.logs(1), "console:\n" + console + "\ncollector:\n" + collector.log());
            OtlpLogs.Log log = OtlpLogs.log(sdkLogs.get(0).span(), "shop.web", "");
            assertEquals("cart 42 locked", log.body());
            assertEquals(root.spanId(), log.spanId());
            assertEquals(root.traceIdLo(), log.traceIdLo());

            List<byte[]> sdkResource = theSdksResource(seen);
            List<String> sdkKeys = sdkResource.stream().map(OtlpFile::key).toList();
            assertTrue(sdkKeys.containsAll(List.of("service.name", "deployment.tier", "telemetry.sdk.language")), sdkKeys.toString());
            for (Path file : List.of(collector.traces, collector.logs)) {
                List<List<byte[]>> resources = OtlpFile.resources(file);
                assertTrue(!resources.isEmpty(), "no resource in " + file);
                for (List<byte[]> resource : resources) {
                    assertTheSdksResourceFirst(sdkResource, resource);
                }
            }
        }
    }

    /** The resource the seen exporter was given: one, for every batch. */
    static List<byte[]> theSdksResource(Path seen) throws Exception {
        List<List<byte[]>> resources = OtlpFile.resources(seen);
        assertTrue(!resources.isEmpty(), "the seen exporter wrote no resource");
        for (List<byte[]> r : resources) {
            assertEquals(canonical(resources.get(0)), canonical(r));
        }
        return resources.get(0);
    }

    /** {@code arrived} is {@code sdk}'s attributes exactly, then only the recorder's own. */
    static void assertTheSdksResourceFirst(List<byte[]> sdk, List<byte[]> arrived) {
        assertTrue(arrived.size() >= sdk.size(), canonical(arrived).toString());
        assertEquals(canonical(sdk), canonical(arrived.subList(0, sdk.size())));
        List<String> rest = arrived.subList(sdk.size(), arrived.size()).stream().map(OtlpFile::key).toList();
        assertTrue(rest.contains("process.pid"), rest.toString());
        for (String key : rest) {
            assertTrue(RECORDER_KEYS.contains(key) || key.startsWith("linux.namespace."), "not the recorder's own: " + rest);
        }
    }

    /** What the recorder adds after an SDK's resource (and linux.namespace.*). */
    static final List<String> RECORDER_KEYS = List.of("host.name", "process.pid", "process.executable.name",
            "process.executable.path", "process.command_line", "container.id", "k8s.pod.uid");

    static List<String> canonical(List<byte[]> keyValues) {
        return keyValues.stream().map(Canonical::of).toList();
    }

    static OtlpSpans.Span byName(List<OtlpFile.Arrived> spans, String name) {
        return spans.stream().map(OtlpFile.Arrived::readable).filter(s -> s.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans));
    }

    static List<OtlpFile.Arrived> sorted(List<OtlpFile.Arrived> spans) {
        List<OtlpFile.Arrived> copy = new ArrayList<>(spans);
        copy.sort(Comparator.comparing(OtlpFile.Arrived::spanIdHex));
        return copy;
    }
}
