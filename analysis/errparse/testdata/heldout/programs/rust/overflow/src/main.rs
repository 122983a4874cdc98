fn total(weights: &[u8]) -> u8 {
    let mut sum: u8 = 0;
    for w in weights {
        sum += w;
    }
    sum
}

fn main() {
    let w = vec![200, 100];
    println!("{}", total(&w));
}
