int scale(int x) {
    return x * factor;
}
