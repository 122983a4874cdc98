module example.com/nilptr

go 1.22
