package helper

// Celsius converts a Fahrenheit temperature.
func Celsius(f float64) float64 {
	return (f - 32) * 5 / 6
}
