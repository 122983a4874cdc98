import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

public class Main {
    static class StartupException extends RuntimeException {
        StartupException(String msg, Throwable cause) {
            super(msg, cause);
        }
    }

    static String loadTemplate(String name) {
        try {
            return Files.readString(Path.of("templates", name));
        } catch (IOException e) {
            throw new UncheckedIOException("template " + name, e);
        }
    }

    static void boot() {
        try {
            loadTemplate("index.html");
        } catch (UncheckedIOException e) {
            throw new StartupException("cannot start", e);
        }
    }

    public static void main(String[] args) {
        boot();
    }
}
