module example.com/missingreturn

go 1.22
