module example.com/subtestnil

go 1.22
