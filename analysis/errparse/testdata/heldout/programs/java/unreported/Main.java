import java.nio.file.Files;
import java.nio.file.Path;

public class Main {
    static String readConfig(String path) {
        return Files.readString(Path.of(path));
    }

    public static void main(String[] args) {
        System.out.println(readConfig("app.conf"));
    }
}
