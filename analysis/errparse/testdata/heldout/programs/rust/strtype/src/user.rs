pub struct User {
    pub name: String,
    pub age: u8,
}

pub fn guest() -> User {
    User { name: "guest", age: 0 }
}
