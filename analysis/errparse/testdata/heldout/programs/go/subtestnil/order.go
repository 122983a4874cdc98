package subtestnil

type Customer struct {
	Name string
}

type Order struct {
	ID       int
	Customer *Customer
}

// Label is what the invoice header prints.
func (o Order) Label() string {
	return o.Customer.Name + " #" + string(rune('0'+o.ID))
}
