package com.acme.orders;

import java.util.List;

public class Report {
    public static long revenue(List<Order> orders) {
        long sum = 0;
        for (Order o : orders) {
            sum += o.getTotalCents();
        }
        return sum;
    }
}
