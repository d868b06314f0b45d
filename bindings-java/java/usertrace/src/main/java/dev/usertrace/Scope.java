package dev.usertrace;

/**
 * A trace context made current on this thread ({@link TraceContext#makeCurrent},
 * {@link Span#makeCurrent}); closing it puts back the one current before.
 * Close scopes in the reverse order of their making, with try-with-resources.
 */
@FunctionalInterface
public interface Scope extends AutoCloseable {
    /** Puts back the context that was current before this scope. */
    @Override
    void close();
}
