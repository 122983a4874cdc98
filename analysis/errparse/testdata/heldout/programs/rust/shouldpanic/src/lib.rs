pub fn withdraw(balance: u64, amount: u64) -> u64 {
    if amount > balance {
        panic!("insufficient funds: balance {balance}, wanted {amount}");
    }
    balance - amount
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "overdraft")]
    fn rejects_overdraft() {
        withdraw(10, 20);
    }
}
