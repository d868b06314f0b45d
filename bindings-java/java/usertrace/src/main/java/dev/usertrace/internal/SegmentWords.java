package dev.usertrace.internal;

/**
 * The {@link EnableWord.Route#SEGMENT} read, on JDK 17 to 21: not there.
 * The jar is multi-release: JDK 22 and later load
 * {@code META-INF/versions/22/dev/usertrace/internal/SegmentWords.class}
 * instead (source: {@code src/main/java22}), which reads words through
 * java.lang.foreign. This class only tells {@link EnableWord} that the route
 * is missing, so that it picks another.
 */
final class SegmentWords {
    private SegmentWords() {}

    /** Why the segment route is not taken, or null if it can be. */
    static String unavailable() {
        return "java.lang.foreign needs JDK 22 (or this jar was not loaded as a multi-release jar)";
    }

    /** Never called: {@link #unavailable()} is never null here. */
    static int read(long address) {
        throw new UnsupportedOperationException(unavailable());
    }
}
