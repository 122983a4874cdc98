public class Main {
    public static void main(String[] args) {
        int count = "five";
        System.out.println(undefinedVar + count);
    }
}
