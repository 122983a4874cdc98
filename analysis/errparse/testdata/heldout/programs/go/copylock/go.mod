module example.com/copylock

go 1.22
