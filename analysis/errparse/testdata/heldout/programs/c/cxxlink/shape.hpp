struct Shape {
	double w, h;
	double area() const;
};
