import java.util.List;
import java.util.stream.Collectors;

public class Main {
    public static void main(String[] args) {
        List<String> raw = List.of("1", "2", "x3");
        List<Integer> nums = raw.stream()
                .map(s -> Integer.valueOf(s))
                .collect(Collectors.toList());
        System.out.println(nums);
    }
}
