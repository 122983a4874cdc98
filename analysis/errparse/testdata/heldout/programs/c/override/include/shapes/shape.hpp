#pragma once

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Square : Shape {
	double side = 1;
	double area() override { return side * side; }
};
