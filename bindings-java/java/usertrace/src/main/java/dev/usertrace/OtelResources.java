package dev.usertrace;

import dev.usertrace.internal.Native;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * The event an OpenTelemetry SDK's Resource travels in:
 * {@code <provider>_otel_resource}, its {@code service.name} readable and the
 * resource as its OTLP protobuf. The rule (fields, and when a resource is due:
 * while a recorder listens, not the same one twice within a second) is the
 * native core's; this class only hands the arguments over. A process's
 * exporters share one.
 *
 * <p>Thread-safe. The native handle is freed by a Cleaner once this is unreachable.
 */
public final class OtelResources {
    private final String provider;
    private final long handle;

    private OtelResources(String provider, long handle) {
        this.provider = provider;
        this.handle = handle;
    }

    /**
     * The process's resource event for {@code provider}, registered at the first call.
     *
     * @throws UsertraceException where usertrace cannot register it, or
     *     {@code provider} is not a valid name
     */
    public static OtelResources register(String provider) {
        Objects.requireNonNull(provider, "provider");
        if (!Native.isLoaded()) {
            throw OtelLogs.unavailable(provider + "_otel_resource");
        }
        long h = Native.otelResources0(provider);
        OtelResources resources = new OtelResources(provider, h);
        Tracepoint.CLEANER.register(resources, () -> Native.otelResourcesFree0(h));
        return resources;
    }

    /** Whether a recorder listens to the resource event: one load. */
    public boolean isEnabled() {
        try {
            return Native.otelResourcesEnabled0(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Writes the resource, {@code otlp} being its OTLP protobuf {@code Resource}
     * message, if a recorder listens and the same was not written in the last second.
     *
     * @return whether it wrote
     * @throws UsertraceException if it could not be written (over the core's
     *     limit, the kernel refused)
     */
    public boolean emit(String serviceName, byte[] otlp) {
        try {
            return Native.otelResourceEmit0(handle, Objects.requireNonNull(serviceName, "serviceName"),
                    Objects.requireNonNull(otlp, "otlp"));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        return "OtelResources[" + provider + "_otel_resource]";
    }
}
