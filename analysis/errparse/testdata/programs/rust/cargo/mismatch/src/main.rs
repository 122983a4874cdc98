fn main() {
    let name = String::from("ann");
    let total: u64 = name;
    println!("{}", total);
}
