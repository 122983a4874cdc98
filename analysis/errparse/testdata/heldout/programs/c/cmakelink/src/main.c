int hits = 5;
void hit(void);

int main(void) {
	hit();
	return hits;
}
