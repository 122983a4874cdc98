use std::collections::HashMap;

fn lookup(users: &HashMap<u32, String>, id: u32) -> &str {
    users.get(&id).unwrap()
}

fn main() {
    let mut users = HashMap::new();
    users.insert(1, String::from("ana"));
    println!("{}", lookup(&users, 2));
}
