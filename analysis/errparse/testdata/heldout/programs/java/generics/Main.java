import java.util.ArrayList;
import java.util.List;

public class Main {
    static List<Object> tags() {
        return new ArrayList<>(List.of("a", "b"));
    }

    public static void main(String[] args) {
        List<String> names = tags();
        System.out.println(names);
    }
}
