export class Circle {
  constructor(r) {
    this.r = r;
  }

  area() {
    return PI * this.r * this.r;
  }
}
