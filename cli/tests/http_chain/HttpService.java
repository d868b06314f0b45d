import com.sun.net.httpserver.HttpServer;
import dev.usertrace.Provider;
import dev.usertrace.Scope;
import dev.usertrace.Span;
import dev.usertrace.SpanTracepoint;
import dev.usertrace.TraceContext;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

/**
 * One service of the HTTP chain (cli/tests/http_chain/mod.rs), in Java on
 * the binding alone: the JDK's HttpServer and HttpClient.
 *
 * <pre>java -cp usertrace.jar:. HttpService PROVIDER NEXT_URL COUNT</pre>
 *
 * Says {@code port=N} once its span is registered and it listens on
 * 127.0.0.1 (port 0: the kernel picks). Then, COUNT times: takes one GET,
 * makes its {@code traceparent} current ({@link TraceContext#extract},
 * {@link TraceContext#makeCurrent}), begins the span
 * {@code PROVIDER_handle} inside it, calls NEXT_URL with the span's
 * {@code traceparent} ({@link TraceContext#injectCurrent}), answers with the next
 * service's reply and prints {@code span trace=T span=S parent=P} (hex;
 * {@code -} for no parent).
 */
public final class HttpService {
    public static void main(String[] args) throws Exception {
        URI next = URI.create(args[1]);
        int count = Integer.parseInt(args[2]);
        // HTTP/1.1: the default, HTTP/2, would ask a plain-HTTP server to upgrade.
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        CountDownLatch answered = new CountDownLatch(count);
        try (Provider provider = new Provider(args[0])) {
            SpanTracepoint handle = provider.span("handle");
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", exchange -> {
                TraceContext incoming = TraceContext.extract(exchange.getRequestHeaders()::getFirst);
                TraceContext mine;
                byte[] body;
                try (Scope caller = TraceContext.makeCurrent(incoming);
                     Span span = handle.begin();
                     Scope inner = span.makeCurrent()) {
                    mine = TraceContext.current();
                    HttpRequest.Builder request = HttpRequest.newBuilder(next);
                    TraceContext.injectCurrent(request::header);
                    body = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray()).body();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException(e);
                }
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
                String parent = incoming == null ? "-" : incoming.spanId();
                System.out.println("span trace=" + (mine == null ? "-" : mine.traceId()) + " span=" + (mine == null ? "-" : mine.spanId()) + " parent=" + parent);
                System.out.flush();
                answered.countDown();
            });
            server.start();
            System.out.println("port=" + server.getAddress().getPort());
            System.out.flush();
            answered.await();
            server.stop(0);
        }
    }
}
