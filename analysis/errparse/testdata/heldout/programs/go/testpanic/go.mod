module example.com/testpanic

go 1.22
