public class Main {
    static String name;

    static int nameLength() {
        return name.length();
    }

    public static void main(String[] args) {
        System.out.println(nameLength());
    }
}
