package dev.usertrace.agent;

import dev.usertrace.Tracepoint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code <provider>_gc_pause}: each jdk.GCPhasePause as a completed span,
 * with the collector and cause of its collection. A pause event names
 * neither (its name is "GC Pause"); jdk.GarbageCollection with the same
 * gcId does, and JFR delivers it after the collection's pauses, since it
 * ends after them. So pauses wait here for their collection; a pause whose
 * collection is already known goes out at once. Called on the stream's
 * thread (synchronized, as a stream being replaced may still deliver).
 */
final class GcPauseSpans {
    /** Collections remembered, and collections with pauses waiting: a few GCs' worth. */
    private static final int KEEP = 64;

    private record Pause(long startNs, long durationNs) {}

    private record Collection(String name, String cause) {}

    private final Tracepoint tp;
    private final Map<Long, Collection> collections = bounded();
    private final Map<Long, List<Pause>> waiting = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, List<Pause>> eldest) {
            if (size() <= KEEP) {
                return false;
            }
            // Its collection never came (the stream was replaced): send
            // what is known rather than lose the pauses.
            for (Pause p : eldest.getValue()) {
                emit(eldest.getKey(), p, new Collection("", ""));
            }
            return true;
        }
    };

    GcPauseSpans(Tracepoint tp) {
        this.tp = tp;
    }

    synchronized void pause(long gcId, long startNs, long durationNs) {
        Pause p = new Pause(startNs, durationNs);
        Collection c = collections.get(gcId);
        if (c != null) {
            emit(gcId, p, c);
        } else {
            waiting.computeIfAbsent(gcId, id -> new ArrayList<>()).add(p);
        }
    }

    synchronized void collection(long gcId, String name, String cause) {
        Collection c = new Collection(name, cause);
        collections.put(gcId, c);
        List<Pause> pauses = waiting.remove(gcId);
        if (pauses != null) {
            for (Pause p : pauses) {
                emit(gcId, p, c);
            }
        }
    }

    private void emit(long gcId, Pause p, Collection c) {
        tp.event().put(p.startNs()).put(p.durationNs()).put(gcId).put(c.name()).put(c.cause()).emit();
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
