import java.util.HashMap;
import java.util.Map;

public class Store {
    static class StoreException extends RuntimeException {
        StoreException(String msg, Throwable cause) {
            super(msg, cause);
        }
    }

    private final Map<String, String> data = new HashMap<>();

    int quantity(String sku) {
        String raw = data.get(sku);
        return raw.length();
    }

    int reserve(String sku) {
        try {
            return quantity(sku);
        } catch (NullPointerException e) {
            throw new StoreException("cannot reserve " + sku, e);
        }
    }

    public static void main(String[] args) {
        new Store().reserve("A-1");
    }
}
