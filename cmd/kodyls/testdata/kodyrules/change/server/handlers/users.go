// Package handlers serves the users API.
package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
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

// Delete removes the user named by the id query parameter.
func (h *UserHandler) Delete(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	fmt.Println("deleting user", id)
	log.Printf("delete user %s with token %s", id, r.Header.Get("Authorization"))
	if err := h.remove(id); err != nil {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(err.Error()))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *UserHandler) remove(id string) error {
	_, err := h.DB.Exec("DELETE FROM users WHERE id = " + id)
	return err
}
