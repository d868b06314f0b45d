package dev.usertrace.agent;

import java.util.Locale;

/**
 * The agent's options: {@code -javaagent:usertrace-agent.jar=key=value,key=value}.
 * <pre>
 *   provider=jvm        prefix of every event name (jvm_gc, jvm_log, ...)
 *   gc=true             jdk.GarbageCollection    -> PROVIDER_gc (a completed span)
 *   gcpause=true        jdk.GCPhasePause         -> PROVIDER_gc_pause (a completed span, with its
 *                       + jdk.GarbageCollection     collection's gc_name and cause)
 *   safepoints=false    jdk.SafepointBegin/End   -> PROVIDER_safepoint (a completed span)
 *   exceptions=true     jdk.JavaExceptionThrow   -> PROVIDER_exception
 *   jul=true            java.util.logging records -> PROVIDER_log
 *   poll=200            ms between checks of which tracepoints a tracer enabled
 *   verbose=false       say on stderr what the agent does
 * </pre>
 */
record Options(String provider, boolean gc, boolean gcPause, boolean safepoints, boolean exceptions, boolean jul,
        long pollMillis, boolean verbose) {

    static final String USAGE = "usertrace agent options (comma-separated): provider=jvm, gc=true, gcpause=true, "
            + "safepoints=false, exceptions=true, jul=true, poll=200 (ms), verbose=false";

    static Options parse(String args) {
        String provider = "jvm";
        boolean gc = true, gcPause = true, safepoints = false, exceptions = true, jul = true, verbose = false;
        long poll = 200;
        if (args != null && !args.isBlank()) {
            for (String part : args.split(",")) {
                String p = part.trim();
                if (p.isEmpty()) {
                    continue;
                }
                int eq = p.indexOf('=');
                String key = (eq < 0 ? p : p.substring(0, eq)).trim().toLowerCase(Locale.ROOT);
                String value = eq < 0 ? "true" : p.substring(eq + 1).trim();
                switch (key) {
                    case "provider": provider = value; break;
                    case "gc": gc = bool(key, value); break;
                    case "gcpause": gcPause = bool(key, value); break;
                    case "safepoints": safepoints = bool(key, value); break;
                    case "exceptions": exceptions = bool(key, value); break;
                    case "jul": jul = bool(key, value); break;
                    case "verbose": verbose = bool(key, value); break;
                    case "poll":
                        try {
                            poll = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("usertrace agent: poll=" + value + " is not a number of ms");
                        }
                        if (poll < 1) {
                            throw new IllegalArgumentException("usertrace agent: poll must be at least 1 ms");
                        }
                        break;
                    default:
                        throw new IllegalArgumentException("usertrace agent: unknown option '" + key + "'. " + USAGE);
                }
            }
        }
        return new Options(provider, gc, gcPause, safepoints, exceptions, jul, poll, verbose);
    }

    private static boolean bool(String key, String value) {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "true": case "on": case "yes": case "1": return true;
            case "false": case "off": case "no": case "0": return false;
            default: throw new IllegalArgumentException("usertrace agent: " + key + "=" + value + " is not true or false");
        }
    }
}
