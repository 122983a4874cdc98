module example.com/infer

go 1.22
