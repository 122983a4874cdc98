pub fn average(xs: &[i32]) -> i32 {
    xs.iter().sum::<i32>() / xs.len() as i32
}

#[cfg(test)]
mod tests {
    use super::average;

    #[test]
    fn average_of_two() {
        assert_eq!(average(&[1, 2]), 2);
    }

    #[test]
    fn average_of_none() {
        assert_eq!(average(&[]), 0);
    }
}
