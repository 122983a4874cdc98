fn last_three(v: &[i32]) -> Vec<i32> {
    let n = v.len();
    vec![v[n - 3], v[n - 2], v[n - 1]]
}

fn main() {
    let data = vec![5, 6, 7];
    println!("{:?}", last_three(&data[..]));
    let table = vec![1, 2, 3];
    let i = table.len() + data.len();
    println!("{}", table[i]);
}
