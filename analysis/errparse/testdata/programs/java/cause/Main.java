public class Main {
    static int port(String s) {
        return Integer.parseInt(s);
    }

    static int load(String s) {
        try {
            return port(s);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("bad config", e);
        }
    }

    public static void main(String[] args) {
        System.out.println(load("http"));
    }
}
