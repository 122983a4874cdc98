module example.com/custompanic

go 1.22
