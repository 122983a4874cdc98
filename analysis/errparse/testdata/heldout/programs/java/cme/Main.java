import java.util.ArrayList;
import java.util.List;

public class Main {
    static void dropEmpty(List<String> xs) {
        for (String x : xs) {
            if (x.isEmpty()) {
                xs.remove(x);
            }
        }
    }

    public static void main(String[] args) {
        List<String> xs = new ArrayList<>(List.of("a", "", "b", "c"));
        dropEmpty(xs);
        System.out.println(xs);
    }
}
