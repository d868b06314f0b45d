package dev.usertrace.agent;

import dev.usertrace.Tracepoint;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code <provider>_safepoint}: each safepoint as a completed span, from
 * the start of jdk.SafepointBegin to the end of jdk.SafepointEnd with the
 * same safepointId. Neither event spans the safepoint alone: SafepointBegin
 * lasts while the threads are brought to it, SafepointEnd while they are
 * let go; the VM operation runs between them. Called on the stream's
 * thread (synchronized, as a stream being replaced may still deliver).
 */
final class SafepointSpans {
    /** Safepoints waiting for their other half; more means one half was lost. */
    private static final int KEEP = 64;

    private record Begin(long startNs, long threads, long jniCritical) {}

    private final Tracepoint tp;
    private final Map<Long, Begin> begins = bounded();
    /** Ends that came before their begin (JFR orders by end time, so rarely). */
    private final Map<Long, Long> ends = bounded();

    SafepointSpans(Tracepoint tp) {
        this.tp = tp;
    }

    synchronized void begin(long id, long startNs, long threads, long jniCritical) {
        Begin b = new Begin(startNs, threads, jniCritical);
        Long endNs = ends.remove(id);
        if (endNs != null) {
            emit(id, b, endNs);
        } else {
            begins.put(id, b);
        }
    }

    synchronized void end(long id, long endNs) {
        Begin b = begins.remove(id);
        if (b != null) {
            emit(id, b, endNs);
        } else {
            ends.put(id, endNs);
        }
    }

    private void emit(long id, Begin b, long endNs) {
        tp.event().put(b.startNs()).put(Math.max(0, endNs - b.startNs())).put(id).put(b.threads())
                .put(b.jniCritical()).emit();
    }

    private static <V> Map<Long, V> bounded() {
        return new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, V> eldest) {
                return size() > KEEP;
            }
        };
    }
}
