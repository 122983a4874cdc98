mod user;

fn main() {
    let u = user::guest();
    println!("{} {}", u.name, u.age);
}
