import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Span;
import dev.usertrace.SpanTracepoint;
import dev.usertrace.Tracepoint;
import dev.usertrace.Usertrace;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * A small service loop: its own tracepoint and span (the API), plus GC,
 * logging and exceptions that the agent forwards without a line of code.
 * See README.md.
 */
public final class Service {
    private static final Logger LOG = Logger.getLogger("service");

    public static void main(String[] args) throws InterruptedException {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        System.out.println(Usertrace.status().message());
        try (Provider app = new Provider("service")) {
            Tracepoint request = app.tracepoint("request", Field.string("path"), Field.u16("status"), Field.u64("micros"));
            SpanTracepoint handle = app.span("handle", Field.u32("n"));
            List<byte[]> cache = new ArrayList<>();
            for (int i = 1; i <= requests; i++) {
                long start = System.nanoTime();
                String path = "/items/" + i;
                int status = i % 7 == 0 ? 500 : 200;
                // service_handle(span_begin, n) now, service_span_end(span_end) at the end of the block.
                try (Span s = handle.event().put(i).begin()) {
                    for (int j = 0; j < 500; j++) {
                        cache.add(new byte[4096]);
                    }
                    if (cache.size() > 20_000) {
                        cache.clear();
                        System.gc();
                    }
                    if (status == 500) {
                        try {
                            throw new IllegalStateException("item " + i + " is broken");
                        } catch (IllegalStateException e) {
                            LOG.warning("request " + path + " failed: " + e.getMessage());
                        }
                    } else {
                        LOG.info("request " + path + " ok");
                    }
                }
                long micros = (System.nanoTime() - start) / 1000;
                if (request.isEnabled()) {
                    request.event().put(path).put(status).put(micros).emit();
                }
                Thread.sleep(100);
            }
        }
    }
}
