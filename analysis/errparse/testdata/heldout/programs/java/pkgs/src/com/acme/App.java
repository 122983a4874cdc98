package com.acme;

import com.acme.model.Invoice;

public class App {
    public static void main(String[] args) {
        Invoice inv = new Invoice(120);
        inv.applyDiscount("10");
        System.out.println(inv.total());
    }
}
