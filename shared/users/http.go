package users

import (
	"net/http"
	"strconv"

	"github.com/quireapi/quire/shared/quire"
	"github.com/quireapi/quire/shared/rest"
)

// Handlers serves the users resource from a Store.
type Handlers struct {
	Store Store
}

// Routes returns the handler of each users route, keyed as in the route
// table.
func (h *Handlers) Routes() rest.Handlers {
	return rest.Handlers{
		"GET /users":         h.list,
		"POST /users":        h.create,
		"GET /users/{id}":    h.get,
		"PUT /users/{id}":    h.replace,
		"DELETE /users/{id}": h.delete,
	}
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) error {
	page, err := rest.ParsePage(r)
	if err != nil {
		return err
	}
	var after quire.ID
	if page.After != "" {
		n, err := strconv.ParseInt(page.After, 10, 64)
		if err != nil || n <= 0 || quire.ID(n) > quire.MaxID {
			return rest.InvalidCursor()
		}
		after = quire.ID(n)
	}
	us, next, err := h.Store.List(r.Context(), after, page.Limit)
	if err != nil {
		return err
	}
	if us == nil {
		us = []User{}
	}
	if next != 0 {
		rest.SetNext(w, r, next.String())
	}
	return rest.JSON(w, http.StatusOK, us)
}

func (h *Handlers) create(w http.ResponseWriter, r *http.Request) error {
	var f Fields
	if err := rest.Decode(r, &f); err != nil {
		return err
	}
	u, err := newUser(f)
	if err != nil {
		return err
	}
	if err := h.Store.Create(r.Context(), u); err != nil {
		return err
	}
	w.Header().Set("Location", rest.URL(r, "/users/"+u.ID.String()))
	return rest.JSON(w, http.StatusCreated, u)
}

func (h *Handlers) get(w http.ResponseWriter, r *http.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	u, err := h.Store.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return rest.JSON(w, http.StatusOK, u)
}

func (h *Handlers) replace(w http.ResponseWriter, r *http.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	var f Fields
	if err := rest.Decode(r, &f); err != nil {
		return err
	}
	u, err := f.user()
	if err != nil {
		return err
	}
	u.ID = id
	stored, err := h.Store.Replace(r.Context(), u)
	if err != nil {
		return err
	}
	return rest.JSON(w, http.StatusOK, stored)
}

func (h *Handlers) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := quire.ParseID(r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := h.Store.Delete(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
