import java.util.Map;

public class Main {
    static int port(Map<String, String> env) {
        String raw = env.getOrDefault("PORT", "80 ");
        return Integer.parseInt(raw);
    }

    public static void main(String[] args) {
        System.out.println(port(Map.of()));
    }
}
