module example.com/helper

go 1.22
