fn main() {
    let unused = 3;
    let count: usize = "7";
    println!("{}", count);
}
