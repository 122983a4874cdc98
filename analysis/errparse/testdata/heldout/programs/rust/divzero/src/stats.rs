pub fn mean(values: &[u32]) -> u32 {
    let total: u32 = values.iter().sum();
    total / values.len() as u32
}
