#pragma once
#include <vector>

template <typename T>
class Stack {
public:
	void push(const T& v) { items_.push_back(v); }
	T top() const { return items_.back().value(); }

private:
	std::vector<T> items_;
};
