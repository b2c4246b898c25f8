package rest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/quireapi/quire/internal/quire"
)

// Param returns the value of r's query parameter name and whether r has it
// ("?embed" alone has it, empty). Every parameter of the API takes one
// value: one sent twice, or whose value is not percent-encoded (a % that
// begins no escape), is EINVALID naming it (see ParamError), never its
// first value nor nothing. Parameters of other names are left alone.
func Param(r *http.Request, name string) (value string, ok bool, err error) {
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != name {
			continue
		}
		if ok {
			return "", true, ParamError(name, "is sent more than once; send it once")
		}
		if value, err = url.QueryUnescape(v); err != nil {
			return "", true, ParamError(name, "is not percent-encoded: a % must begin an escape such as %25")
		}
		ok = true
	}
	return value, ok, nil
}

// ParamError is the EINVALID of the query parameter name, of which detail
// says what is wrong ("must be an integer from 1 to 100"). Its problem
// names the parameter in errors by the pointer "/" + name: the member it
// would be were the query string a JSON object. No route takes a body
// member and a query parameter of the same name.
func ParamError(name, detail string) *quire.Error {
	return &quire.Error{Code: quire.EINVALID, Message: "The query parameter " + name + " " + detail + ".",
		Fields: []quire.FieldError{{Pointer: "/" + name, Detail: detail}}}
}
