package dev.usertrace.agent;

import dev.usertrace.Tracepoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingStream;

/**
 * Forwards JFR events through an in-process {@link RecordingStream}, which
 * runs only while a tracer listens: a daemon thread checks the tracepoints'
 * enable words every {@code poll} ms (a few loads), and starts, changes or
 * closes the stream when the set of enabled tracepoints changes. While none
 * is enabled JFR is not even started, so the application pays nothing.
 */
final class JfrBridge implements Runnable {
    /**
     * One JFR event type and the tracepoint it goes to, forwarded while that
     * tracepoint is enabled. Several sources may feed one tracepoint (a
     * completed span joined from two JFR events), and one JFR event several.
     */
    record Source(String jfrEvent, Tracepoint tp, boolean threshold0, Consumer<RecordedEvent> forward) {}

    private final List<Source> sources;
    private final MonotonicClock clock;
    /** How often sampleClock() commits a sample: JFR's flush period. */
    private static final long CLOCK_SAMPLE_NS = 1_000_000_000L;

    private final long pollMillis;
    /** When sampleClock() last committed; only the watcher thread uses it. */
    private long lastSample = System.nanoTime() - CLOCK_SAMPLE_NS;
    /** Whether the current stream flushed once yet, for the verbose log. */
    private volatile boolean delivering;
    /** Whether the current stream has the clock sample enabled; guarded by this. */
    private boolean clockEnabled;
    /** Whether the current stream received a clock sample yet, for the verbose log. */
    private volatile boolean sampled;
    private final boolean verbose;
    private RecordingStream stream;
    private Set<String> running = Set.of();
    /** Set by the shutdown hook: no stream starts again. */
    private boolean stopped;

    JfrBridge(List<Source> sources, MonotonicClock clock, long pollMillis, boolean verbose) {
        this.sources = List.copyOf(sources);
        this.clock = clock;
        this.pollMillis = pollMillis;
        this.verbose = verbose;
    }

    /** Starts the stream now if a tracer already listens, then watches from a daemon thread. */
    void start() {
        update();
        Thread t = new Thread(this, "usertrace-jfr-watcher");
        t.setDaemon(true);
        t.start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::close, "usertrace-jfr-shutdown"));
    }

    @Override
    public void run() {
        while (true) {
            try {
                Thread.sleep(pollMillis);
            } catch (InterruptedException e) {
                return;
            }
            update();
            sampleClock();
        }
    }

    /**
     * Commits a clock sample (see {@link MonotonicClock}) about once a second
     * while a stream delivers, as often as JFR hands events over. From this
     * thread: JFR records nothing from the thread that runs the stream, so
     * its flush callback cannot. The sample's event is enabled only once the
     * stream delivers: registering an event class of our own costs JFR class
     * instrumentation, which must not delay the stream's start (under
     * emulation it took seconds); until then the clock's fallback applies.
     */
    private synchronized void sampleClock() {
        if (stream == null || !delivering) {
            return;
        }
        if (!clockEnabled) {
            clockEnabled = true;
            try {
                stream.enable(MonotonicClock.ClockSample.class).withoutThreshold();
                stream.onEvent(MonotonicClock.CLOCK_SAMPLE, e -> {
                    clock.onSample(e);
                    if (!sampled) {
                        sampled = true;
                        log("JFR clock sampled: wall minus CLOCK_MONOTONIC is " + clock.offsetNs() + " ns");
                    }
                });
            } catch (RuntimeException | Error e) {
                log("no JFR clock samples (" + e + "): span starts use the clock's fallback");
                return;
            }
        }
        long now = System.nanoTime();
        if (now - lastSample >= CLOCK_SAMPLE_NS) {
            lastSample = now;
            MonotonicClock.sample();
        }
    }

    /** Makes the stream match the enabled tracepoints. */
    synchronized void update() {
        if (stopped) {
            return;
        }
        Set<String> wanted = new TreeSet<>();
        for (Source s : sources) {
            if (s.tp().isEnabled()) {
                wanted.add(s.jfrEvent());
            }
        }
        if (wanted.equals(running)) {
            return;
        }
        closeStream();
        running = wanted;
        if (wanted.isEmpty()) {
            log("no JFR tracepoint enabled: JFR stream stopped");
            return;
        }
        try {
            RecordingStream rs = new RecordingStream();
            for (Source s : sources) {
                if (!wanted.contains(s.jfrEvent())) {
                    continue;
                }
                var settings = rs.enable(s.jfrEvent());
                if (s.threshold0()) {
                    settings.withoutThreshold();
                }
                settings.withoutStackTrace();
                rs.onEvent(s.jfrEvent(), e -> {
                    if (s.tp().isEnabled()) {
                        try {
                            s.forward().accept(e);
                        } catch (RuntimeException ex) {
                            log("cannot forward " + s.jfrEvent() + ": " + ex);
                        }
                    }
                });
            }
            rs.onFlush(() -> {
                if (!delivering) {
                    delivering = true;
                    log("JFR stream delivering");
                }
            });
            rs.setReuse(true);
            rs.setMaxAge(Duration.ofSeconds(30));
            // Not startAsync(): its thread is never a daemon (JDK 17), so
            // the application's JVM would not exit while a tracer listens
            // (shutdown hooks, which close the stream, run only after the
            // last non-daemon thread ends). start() runs the stream in ours.
            Thread t = new Thread(() -> {
                try {
                    rs.start();
                } catch (RuntimeException e) {
                    log("JFR stream ended: " + e);
                }
            }, "usertrace-jfr-stream");
            t.setDaemon(true);
            t.start();
            stream = rs;
            delivering = false;
            clockEnabled = false;
            sampled = false;
            log("JFR stream started for " + wanted);
        } catch (RuntimeException | Error e) {
            System.err.println("usertrace agent: cannot start a JFR RecordingStream: " + e);
        }
    }

    /**
     * Waits up to {@code millis} for the stream to hand JFR's events over
     * once (its first flush): JFR then records, and a collection from now
     * on is forwarded. False if it did not in time; true at once if no
     * stream runs (no tracer enabled a JFR source: there is nothing to wait for).
     */
    boolean awaitDelivery(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (streaming() && !delivering) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    private synchronized boolean streaming() {
        return stream != null;
    }

    synchronized void close() {
        stopped = true;
        closeStream();
        running = Set.of();
    }

    private void closeStream() {
        if (stream != null) {
            stream.close();
            stream = null;
        }
    }

    private void log(String msg) {
        if (verbose) {
            System.err.println("usertrace agent: " + msg);
        }
    }

    // Field extraction, shared by the sources in Agent.

    /** The JFR start time in ns since the Unix epoch (for instants; spans use {@link MonotonicClock}). */
    static long startNs(RecordedEvent e) {
        Instant t = e.getStartTime();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    static long durationNs(RecordedEvent e) {
        return e.getDuration().toNanos();
    }

    static long nanos(RecordedEvent e, String field) {
        // A Timespan field's value is its raw long: getDuration converts it.
        return e.hasField(field) ? e.getDuration(field).toNanos() : 0;
    }

    static String string(RecordedEvent e, String field) {
        if (!e.hasField(field)) {
            return "";
        }
        Object v = e.getValue(field);
        if (v instanceof RecordedClass) {
            return ((RecordedClass) v).getName();
        }
        if (v instanceof RecordedThread) {
            String n = ((RecordedThread) v).getJavaName();
            return n == null ? "" : n;
        }
        return v == null ? "" : v.toString().replace('\0', ' ');
    }

    static long number(RecordedEvent e, String field) {
        return e.hasField(field) ? e.getLong(field) : 0;
    }

    static long u32(RecordedEvent e, String field) {
        return number(e, field) & 0xffff_ffffL;
    }

    static List<String> names(List<Source> sources) {
        List<String> out = new ArrayList<>();
        for (Source s : sources) {
            out.add(s.jfrEvent() + " -> " + s.tp().name());
        }
        return out;
    }
}
