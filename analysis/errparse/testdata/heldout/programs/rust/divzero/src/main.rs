mod stats;

fn main() {
    let readings: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    println!("mean: {}", stats::mean(&readings));
}
