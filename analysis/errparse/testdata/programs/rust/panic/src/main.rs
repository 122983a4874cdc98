fn parse_port(s: &str) -> u16 {
    let port: u16 = s.parse().unwrap();
    port
}

fn main() {
    let port = parse_port("http");
    println!("listening on {port}");
}
