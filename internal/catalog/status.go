package catalog

// Status is whether a product can be bought.
type Status string

// The product states. Only an available product can be bought. ARCHIVED
// exists from API v2 on; v1 shows an archived product as DISCONTINUED,
// which is what it means to a v1 client: it is no longer sold.
const (
	StatusAvailable    Status = "AVAILABLE"
	StatusDiscontinued Status = "DISCONTINUED"
	StatusArchived     Status = "ARCHIVED"
)

// In returns s as API version v shows it.
func (s Status) In(v int) Status {
	if v < 2 && s == StatusArchived {
		return StatusDiscontinued
	}
	return s
}

// validIn reports whether a client of API version v may set s.
func (s Status) validIn(v int) bool {
	return s == StatusAvailable || s == StatusDiscontinued || (v >= 2 && s == StatusArchived)
}
