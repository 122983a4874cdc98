module example.com/testjson

go 1.22
