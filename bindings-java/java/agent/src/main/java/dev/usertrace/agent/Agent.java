package dev.usertrace.agent;

import dev.usertrace.LogConvention;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.Usertrace;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import jdk.jfr.consumer.RecordedThread;

/**
 * {@code java -javaagent:usertrace-agent.jar[=options] -jar app.jar}: the
 * application's GC, GC pauses, safepoints (when asked for), thrown exceptions
 * and java.util.logging records appear as user_events, beside the rest of
 * the system in perf, ftrace and {@code usertrace record}. See {@link Options}.
 *
 * <p>Nothing fails the application: without user_events (or the native
 * library) the agent says so once on stderr and does nothing more.
 */
public final class Agent {
    private Agent() {}

    public static void premain(String args, Instrumentation inst) {
        start(args);
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(args);
    }

    /** {@code java -jar usertrace-agent.jar} prints the options and the status. */
    public static void main(String[] args) {
        System.out.println(Options.USAGE);
        System.out.println(Usertrace.status().message());
    }

    static synchronized void start(String args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return;
        }
        try {
            install(options);
        } catch (RuntimeException | LinkageError e) {
            System.err.println("usertrace agent: not started: " + e);
        }
    }

    private static void install(Options o) {
        Provider provider = new Provider(o.provider());
        MonotonicClock clock = new MonotonicClock();
        List<JfrBridge.Source> sources = new ArrayList<>();
        List<Tracepoint> all = new ArrayList<>();
        if (o.gc()) {
            Tracepoint tp = add(all, provider.completedSpan(Events.GC, Events.GC_FIELDS));
            sources.add(new JfrBridge.Source("jdk.GarbageCollection", tp, true, e -> tp.event()
                    .put(clock.monotonicNs(e.getStartTime())).put(JfrBridge.durationNs(e)).put(JfrBridge.u32(e, "gcId"))
                    .put(JfrBridge.string(e, "name")).put(JfrBridge.string(e, "cause"))
                    .put(JfrBridge.nanos(e, "sumOfPauses")).put(JfrBridge.nanos(e, "longestPause")).emit()));
        }
        if (o.gcPause()) {
            Tracepoint tp = add(all, provider.completedSpan(Events.GC_PAUSE, Events.GC_PAUSE_FIELDS));
            GcPauseSpans pauses = new GcPauseSpans(tp);
            sources.add(new JfrBridge.Source("jdk.GCPhasePause", tp, true, e -> pauses.pause(JfrBridge.u32(e, "gcId"),
                    clock.monotonicNs(e.getStartTime()), JfrBridge.durationNs(e))));
            sources.add(new JfrBridge.Source("jdk.GarbageCollection", tp, true, e -> pauses.collection(
                    JfrBridge.u32(e, "gcId"), JfrBridge.string(e, "name"), JfrBridge.string(e, "cause"))));
        }
        if (o.safepoints()) {
            Tracepoint tp = add(all, provider.completedSpan(Events.SAFEPOINT, Events.SAFEPOINT_FIELDS));
            SafepointSpans safepoints = new SafepointSpans(tp);
            sources.add(new JfrBridge.Source("jdk.SafepointBegin", tp, true, e -> safepoints.begin(
                    JfrBridge.number(e, "safepointId"), clock.monotonicNs(e.getStartTime()),
                    JfrBridge.u32(e, "totalThreadCount"), JfrBridge.u32(e, "jniCriticalThreadCount"))));
            sources.add(new JfrBridge.Source("jdk.SafepointEnd", tp, true, e -> safepoints.end(
                    JfrBridge.number(e, "safepointId"), clock.monotonicNs(e.getEndTime()))));
        }
        if (o.exceptions()) {
            Tracepoint tp = add(all, provider.tracepoint(Events.EXCEPTION, Events.EXCEPTION_FIELDS));
            sources.add(new JfrBridge.Source("jdk.JavaExceptionThrow", tp, false, e -> {
                RecordedThread t = e.getThread();
                tp.event().put(JfrBridge.startNs(e)).put(t == null ? 0 : t.getJavaThreadId())
                        .put(t == null || t.getJavaName() == null ? "" : t.getJavaName())
                        .put(JfrBridge.string(e, "thrownClass")).put(JfrBridge.string(e, "message")).emit();
            }));
        }
        if (o.jul()) {
            Tracepoint tp = add(all, provider.tracepoint(LogConvention.NAME, LogConvention.fields()));
            Logger.getLogger("").addHandler(new JulHandler(tp));
        }
        if (!sources.isEmpty()) {
            JfrBridge bridge = new JfrBridge(sources, clock, o.pollMillis(), o.verbose());
            bridge.start();
            if (o.startWaitSeconds() > 0) {
                awaitJfr(bridge, o.startWaitSeconds());
            }
        }
        Tracepoint first = all.isEmpty() ? null : all.get(0);
        if (first != null && first.registrationError() != null) {
            System.err.println("usertrace agent: tracepoints disabled: " + first.registrationError().getMessage());
        } else if (o.verbose()) {
            List<String> names = new ArrayList<>();
            for (Tracepoint tp : all) {
                names.add(tp.name());
            }
            System.err.println("usertrace agent: registered " + names);
        }
    }

    /** Holds main (option startwait) until the stream a tracer started delivers, or says why not. */
    private static void awaitJfr(JfrBridge bridge, long seconds) {
        try {
            if (!bridge.awaitDelivery(TimeUnit.SECONDS.toMillis(seconds))) {
                System.err.println("usertrace agent: JFR did not deliver within startwait=" + seconds
                        + " s; main starts, and collections before JFR runs are not forwarded");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Tracepoint add(List<Tracepoint> all, Tracepoint tp) {
        all.add(tp);
        return tp;
    }

}
