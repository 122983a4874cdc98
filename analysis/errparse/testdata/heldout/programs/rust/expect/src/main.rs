mod config;

fn main() {
    let port = config::read_port("app.conf");
    println!("listening on {}", port);
}
