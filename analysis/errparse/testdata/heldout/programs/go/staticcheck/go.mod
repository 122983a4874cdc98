module example.com/sc

go 1.22
