// Package handlers serves the users API.
package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
)

// UserHandler serves /users.
type UserHandler struct {
	DB *sql.DB
}

// Get writes the user named by the id query parameter.
func (h *UserHandler) Get(w http.ResponseWriter, r *http.Request) {
	user, err := h.find(r.Context(), r.URL.Query().Get("id"))
	if err != nil {
		http.Error(w, "user not found", http.StatusNotFound)
		return
	}
	_ = json.NewEncoder(w).Encode(user)
}

func (h *UserHandler) find(ctx context.Context, id string) (map[string]string, error) {
	var name string
	err := h.DB.QueryRowContext(ctx, "SELECT name FROM users WHERE id = $1", id).Scan(&name)
	if err != nil {
		return nil, fmt.Errorf("find user %s: %w", id, err)
	}
	return map[string]string{"id": id, "name": name}, nil
}
