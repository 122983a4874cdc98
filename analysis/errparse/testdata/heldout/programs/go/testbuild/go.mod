module example.com/testbuild

go 1.22
