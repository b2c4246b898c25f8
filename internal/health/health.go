// Package health answers load balancers: GET /health and GET /status are 200
// while DynamoDB answers and 503 with Retry-After while it does not.
package health

import (
	"context"
	"net/http"
	"time"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

// Timeout bounds one check, well inside a 5-second polling interval.
const Timeout = 2 * time.Second

// Pinger checks that the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Handlers serves the health routes.
type Handlers struct {
	DB Pinger
}

// Routes returns the handler of each health route, keyed as in the route
// table.
func (h *Handlers) Routes() rest.Handlers {
	return rest.Handlers{"GET /health": h.check, "GET /status": h.check}
}

// Body is the answer of a healthy check.
type Body struct {
	Status   string `json:"status"`
	Database string `json:"database"`
}

func (h *Handlers) check(w http.ResponseWriter, r *rest.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), Timeout)
	defer cancel()
	w.Header().Set("Cache-Control", "no-store")
	if err := h.DB.Ping(ctx); err != nil {
		w.Header().Set("Retry-After", "5")
		return &quire.Error{Code: quire.EUNAVAILABLE, Message: "The database does not answer.", Err: err}
	}
	return rest.JSON(w, r, http.StatusOK, Body{Status: "ok", Database: "ok"})
}
