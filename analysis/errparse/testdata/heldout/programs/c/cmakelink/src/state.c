int hits = 0;

void hit(void) { hits++; }
