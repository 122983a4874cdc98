const point = { x: 1 };
export const sum = point.x + point.y;
