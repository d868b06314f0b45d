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
 *   startwait=0         when a tracer already listens as the JVM starts, hold main for at most
 *                       this many s until JFR delivers, so that collections from main's first
 *                       line on are forwarded (JFR starts in well under a second on hardware,
 *                       in 10 to 40 s under emulation); 0: main never waits
 *   verbose=false       say on stderr what the agent does
 * </pre>
 */
record Options(String provider, boolean gc, boolean gcPause, boolean safepoints, boolean exceptions, boolean jul,
        long pollMillis, long startWaitSeconds, boolean verbose) {

    static final String USAGE = "usertrace agent options (comma-separated): provider=jvm, gc=true, gcpause=true, "
            + "safepoints=false, exceptions=true, jul=true, poll=200 (ms), startwait=0 (s), verbose=false";

    static Options parse(String args) {
        String provider = "jvm";
        boolean gc = true, gcPause = true, safepoints = false, exceptions = true, jul = true, verbose = false;
        long poll = 200, startWait = 0;
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
                        poll = number(key, value, "ms", 1);
                        break;
                    case "startwait":
                        startWait = number(key, value, "s", 0);
                        break;
                    default:
                        throw new IllegalArgumentException("usertrace agent: unknown option '" + key + "'. " + USAGE);
                }
            }
        }
        return new Options(provider, gc, gcPause, safepoints, exceptions, jul, poll, startWait, verbose);
    }

    private static long number(String key, String value, String unit, long least) {
        long n;
        try {
            n = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("usertrace agent: " + key + "=" + value + " is not a number of " + unit);
        }
        if (n < least) {
            throw new IllegalArgumentException("usertrace agent: " + key + " must be at least " + least + " " + unit);
        }
        return n;
    }

    private static boolean bool(String key, String value) {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "true": case "on": case "yes": case "1": return true;
            case "false": case "off": case "no": case "0": return false;
            default: throw new IllegalArgumentException("usertrace agent: " + key + "=" + value + " is not true or false");
        }
    }
}
