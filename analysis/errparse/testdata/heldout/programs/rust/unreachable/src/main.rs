mod shape;

fn main() {
    for n in ["square", "circle"] {
        println!("{}", shape::sides(n));
    }
}
