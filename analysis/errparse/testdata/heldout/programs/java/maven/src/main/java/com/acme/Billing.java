package com.acme;

import java.util.List;

public class Billing {
    public static long sum(List<Long> amounts) {
        long total = 0;
        for (long a : amounts) {
            total += a;
        }
        return total
    }
}
