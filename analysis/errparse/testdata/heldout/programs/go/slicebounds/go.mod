module example.com/slicebounds

go 1.22
