#include <map>
#include <string>

struct Point {
	int x, y;
};

int main() {
	std::map<Point, std::string> names;
	names[Point{1, 2}] = "a";
	return names.size();
}
