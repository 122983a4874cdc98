#ifndef VEC2_H
#define VEC2_H

struct vec2 {
	double x;
	double y;
};

double vec2_len(struct vec2 v);
bool vec2_is_zero(struct vec2 v);

#endif
