package dev.usertrace.opentelemetry;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

/**
 * The test's second exporter, {@code seen}, as a Java agent extension of its
 * own: the agent loads exporters from extensions, not from the application's
 * class path.
 */
final class SeenExtensionJar {
    private SeenExtensionJar() {}

    static Path write(Path dir) throws IOException {
        Path jar = dir.resolve("seen-exporter.jar");
        Path classes;
        try {
            classes = Path.of(SeenSpanExporterProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        String pkg = "dev/usertrace/opentelemetry/";
        String service = "META-INF/services/io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider";
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            for (String name : List.of("SeenSpanExporterProvider.class", "SeenSpanExporterProvider$1.class")) {
                copy(out, classes.resolve(pkg + name), pkg + name);
            }
            copy(out, classes.resolve(service), service);
        }
        return jar;
    }

    private static void copy(JarOutputStream out, Path file, String name) throws IOException {
        assertTrue(Files.isRegularFile(file), "no " + file + " (mvn test-compile)");
        out.putNextEntry(new JarEntry(name));
        try (OutputStream entry = new NonClosing(out)) {
            Files.copy(file, entry);
        }
        out.closeEntry();
    }

    /** Lets Files.copy write into a jar entry without closing the jar. */
    private static final class NonClosing extends FilterOutputStream {
        NonClosing(OutputStream out) {
            super(out);
        }

        @Override
        public void close() throws IOException {
            flush();
        }
    }
}
