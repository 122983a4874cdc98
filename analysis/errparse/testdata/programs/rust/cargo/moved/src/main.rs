struct Account {
    owner: String,
}

fn close(a: Account) -> String {
    a.owner
}

fn main() {
    let acct = Account { owner: String::from("ann") };
    let name = close(acct);
    println!("{} {}", name, acct.owner);
}
