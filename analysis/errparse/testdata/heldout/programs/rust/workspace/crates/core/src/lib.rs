pub const DEFAULT_PORT: u16 = 8080;

pub fn bind_address(host: &str) -> String {
    format!("{}:{}", host, DEFAULT_PROT)
}
