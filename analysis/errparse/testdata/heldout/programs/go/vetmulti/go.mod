module example.com/vetmulti

go 1.22
