public class Main {
    public static void main(String[] args) {
        Util u = new Util();
        System.out.println(u.twice(3));
    }
}
