module example.com/build

go 1.22
