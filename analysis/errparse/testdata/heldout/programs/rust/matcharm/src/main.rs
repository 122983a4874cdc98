#[derive(Debug)]
enum Command {
    Start,
    Stop,
    Restart { delay: u32 },
}

fn describe(c: &Command) -> &'static str {
    match c {
        Command::Start => "starting",
        Command::Stop => "stopping",
    }
}

fn main() {
    println!("{}", describe(&Command::Restart { delay: 3 }));
}
