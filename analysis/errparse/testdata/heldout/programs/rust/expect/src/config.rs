use std::fs;

pub fn read_port(path: &str) -> u16 {
    let text = fs::read_to_string(path).expect("config file should exist");
    text.trim().parse().unwrap_or(8080)
}
