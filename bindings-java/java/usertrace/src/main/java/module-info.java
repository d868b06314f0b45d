/**
 * Linux user_events tracepoints for Java: {@link dev.usertrace.Provider},
 * {@link dev.usertrace.Tracepoint} and {@link dev.usertrace.Usertrace#status()}.
 *
 * <p>Only {@code dev.usertrace} is exported. {@code dev.usertrace.internal}
 * (the native loader, the JNI methods, the enable word) is not an API, and a
 * modular application cannot reach it. On the class path, the module
 * declaration is ignored and every package is visible, as for any jar.
 */
module dev.usertrace {
    // sun.misc.Unsafe: the JDK 17 to 23 route of Tracepoint.isEnabled()
    // (internal.EnableWord). Required, not static, so that a modular
    // application (or a jlink image) keeps that route.
    requires jdk.unsupported;

    exports dev.usertrace;
}
