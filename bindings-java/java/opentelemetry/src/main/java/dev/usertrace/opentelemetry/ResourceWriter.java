package dev.usertrace.opentelemetry;

import dev.usertrace.OtelResources;
import dev.usertrace.UsertraceException;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.exporter.internal.otlp.ResourceMarshaler;
import io.opentelemetry.sdk.resources.Resource;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Writes the SDK's Resource before an export's items, as the core's
 * {@code <provider>_otel_resource}: each Resource is encoded once, by the
 * SDK's own marshaler (kept by identity with its bytes); whether it is due is
 * the core's rule (a recorder listens, not the same bytes within a second).
 */
final class ResourceWriter {
    private static final Logger LOG = Logger.getLogger(ResourceWriter.class.getName());
    private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

    private Resource encodedFor;
    private String serviceName = "";
    private byte[] otlp = new byte[0];
    private boolean saidFailed;

    /** Writes the resource of each item, in order; false if one could not be written (said once). */
    synchronized <T> boolean write(Iterable<T> items, Function<T, Resource> resourceOf) {
        OtelResources events = Registration.resources();
        if (events == null) {
            return true;
        }
        boolean ok = true;
        Resource last = null;
        for (T item : items) {
            Resource resource = resourceOf.apply(item);
            if (resource == last) {
                continue;
            }
            last = resource;
            try {
                encode(resource);
                events.emit(serviceName, otlp);
            } catch (UsertraceException | IllegalArgumentException | IOException e) {
                ok = false;
                if (!saidFailed) {
                    saidFailed = true;
                    LOG.log(Level.WARNING, "usertrace: the SDK's resource could not be written; the recorder names "
                            + "the process from its environment: " + e.getMessage());
                }
            }
        }
        return ok;
    }

    private void encode(Resource resource) throws IOException {
        if (resource == encodedFor) {
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ResourceMarshaler.create(resource).writeBinaryTo(out);
        String service = resource.getAttribute(SERVICE_NAME);
        otlp = out.toByteArray();
        serviceName = service == null ? "" : service;
        encodedFor = resource;
    }
}
