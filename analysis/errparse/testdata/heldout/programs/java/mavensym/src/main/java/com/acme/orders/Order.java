package com.acme.orders;

public record Order(String id, long totalCents) {
}
