use std::thread;

fn main() {
    let handle = thread::spawn(|| {
        let parts: Vec<&str> = "a=1".split('=').collect();
        parts[2].to_string()
    });
    println!("{:?}", handle.join().is_err());
}
