public class Util {
    int twice(int n) {
        int result = n * 2;
        return reslt;
    }
}
