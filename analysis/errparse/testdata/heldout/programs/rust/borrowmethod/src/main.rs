struct Inventory {
    items: Vec<String>,
    log: Vec<String>,
}

impl Inventory {
    fn record(&mut self, msg: &str) {
        self.log.push(msg.to_string());
    }

    fn restock(&mut self) {
        for item in self.items.iter() {
            self.record(item);
        }
    }
}

fn main() {
    let mut inv = Inventory { items: vec!["apple".into()], log: Vec::new() };
    inv.restock();
    println!("{:?}", inv.log);
}
