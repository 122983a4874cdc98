package com.acme;

public class Parser {
    static String field(String line, int i) {
        String[] parts = line.split(",");
        return parts[i];
    }

    static int ageOf(String line) {
        return Integer.parseInt(field(line, 2).trim());
    }
}
