int compute(int x);

int main(void) {
    return compute(2);
}
