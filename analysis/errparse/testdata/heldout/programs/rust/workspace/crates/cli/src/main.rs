fn main() {
    println!("{}", corelib::bind_address("localhost"));
}
