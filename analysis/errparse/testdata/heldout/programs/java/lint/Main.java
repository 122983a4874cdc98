import java.util.ArrayList;
import java.util.List;

public class Main {
    public static void main(String[] args) {
        List names = new ArrayList();
        names.add("a");
        String first = names.get(0);
        System.out.println(first);
    }
}
