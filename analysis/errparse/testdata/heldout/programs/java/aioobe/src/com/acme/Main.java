package com.acme;

public class Main {
    public static void main(String[] args) {
        System.out.println(Parser.ageOf("ana, 31"));
    }
}
