int counter = 0;

int bump(void) { return ++counter; }
