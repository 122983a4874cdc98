package main

import "net/http"

func main() {
	http.HandleFunc("/health", health)
	_ = http.ListenAndServe(":8080", nil)
}
