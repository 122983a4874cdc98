fn main() {
    let mut scores = vec![1, 2, 3];
    let first = &mut scores[0];
    let second = &mut scores[1];
    *first += 1;
    *second += 1;
    println!("{:?}", scores);
}
