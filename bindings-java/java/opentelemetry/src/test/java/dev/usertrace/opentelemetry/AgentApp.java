package dev.usertrace.opentelemetry;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * The agent test's application, with no OpenTelemetry code: a JDK HTTP server
 * and one java.net.http client call to it, whose spans the Java agent makes.
 * The server prints the {@code traceparent} the agent injected into the call.
 */
public final class AgentApp {
    public static void main(String[] args) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/cart", exchange -> {
            String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
            System.out.println("traceparent=" + traceparent);
            byte[] body = "ok".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            HttpClient client = HttpClient.newHttpClient();
            URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/cart");
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(uri).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            System.out.println("status=" + response.statusCode());
        } finally {
            server.stop(0);
        }
    }
}
