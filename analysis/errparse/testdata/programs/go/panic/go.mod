module example.com/panicker

go 1.22
