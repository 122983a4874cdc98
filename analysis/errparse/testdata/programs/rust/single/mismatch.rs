fn main() {
    let count: i32 = "five";
    println!("{}", count);
}
