module example.com/vetassign

go 1.22
