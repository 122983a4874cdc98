package com.acme.model;

public class Invoice {
    private int total;

    public Invoice(int total) {
        this.total = total;
    }

    public void applyDiscount(int pct) {
        total -= total * pct / 100;
    }

    public int total() {
        return total;
    }
}
