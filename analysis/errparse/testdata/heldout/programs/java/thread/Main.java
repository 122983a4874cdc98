public class Main {
    static int capacity(String s) {
        if (s.isEmpty()) {
            throw new IllegalStateException("no capacity configured");
        }
        return s.length();
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> System.out.println(capacity("")), "worker-1");
        t.start();
        t.join();
    }
}
