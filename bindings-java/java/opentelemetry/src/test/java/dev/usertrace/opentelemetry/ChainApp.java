package dev.usertrace.opentelemetry;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * A service in the middle of a chain, with no OpenTelemetry code: a JDK HTTP
 * server on 127.0.0.1:{@code args[0]} whose {@code /chain} calls
 * {@code args[1]} with java.net.http and answers with that reply. The Java
 * agent makes the server's span and the client's, and carries the trace
 * context from one to the other (cli/tests' four-service chain). Serves until
 * the JVM is stopped (SIGTERM), when the agent's SDK flushes.
 */
public final class ChainApp {
    public static void main(String[] args) throws IOException {
        URI next = URI.create(args[1]);
        HttpClient client = HttpClient.newHttpClient();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 0);
        server.createContext("/chain", exchange -> {
            int status;
            byte[] body;
            try {
                HttpResponse<String> reply = client.send(HttpRequest.newBuilder(next).GET().build(),
                        HttpResponse.BodyHandlers.ofString());
                status = reply.statusCode();
                body = reply.body().getBytes(StandardCharsets.UTF_8);
            } catch (IOException | InterruptedException e) {
                status = 502;
                body = e.toString().getBytes(StandardCharsets.UTF_8);
            }
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }
}
