module example.com/goroutine

go 1.22
