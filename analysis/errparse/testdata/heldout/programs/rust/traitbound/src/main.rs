mod view;

struct Point {
    x: i32,
}

fn main() {
    let p = Point { x: 1 };
    println!("{}", view::show(p));
}
