fn main() {
    let names = vec!["a", "b"];
    for i in 0..names.len() {
        println!("{}", names[i]);
    }
}
