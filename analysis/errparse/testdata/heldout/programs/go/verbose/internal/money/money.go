package money

// Cents converts an amount in euros to cents.
func Cents(eur float64) int { return int(eur * 100) }
