int counter = 1;
int bump(void);

int main(void) { return bump() + counter; }
