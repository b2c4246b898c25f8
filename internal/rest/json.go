package rest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/quireapi/quire/internal/quire"
)

// MaxBodyBytes bounds every JSON request body.
const MaxBodyBytes = 64 << 10

// Decode reads r's body as one JSON value into v, strictly: the Content-Type
// must be application/json (or a +json type) in UTF-8, the body at most
// MaxBodyBytes, well-formed UTF-8 JSON in which no object names a member
// twice, not even in another case (encoding/json matches a field's name in
// any case, and two parsers in a chain could read such a body differently),
// without unknown fields or trailing data, and each field of the right JSON
// type. It returns a *quire.Error with code EMEDIATYPE, ETOOLARGE or
// EINVALID (with the offending field) otherwise.
func Decode(r *http.Request, v any) error {
	body, err := readBody(r, MaxBodyBytes)
	if err != nil {
		return err
	}
	return decodeBytes(body, v)
}

// DecodeOptional is Decode for a body a request may leave out: without one,
// it leaves v as it is.
func DecodeOptional(r *http.Request, v any) error {
	b := bufio.NewReader(r.Body)
	if _, err := b.Peek(1); err == io.EOF {
		return nil
	}
	r.Body = io.NopCloser(b)
	return Decode(r, v)
}

// readBody reads r's body of at most limit bytes, sent as JSON in UTF-8,
// uncompressed: EMEDIATYPE for another Content-Type or a Content-Encoding
// other than identity, ETOOLARGE for a longer body.
func readBody(r *http.Request, limit int) ([]byte, error) {
	if err := checkJSONMediaType(r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return nil, quire.Errorf(quire.EMEDIATYPE, "Send the body uncompressed, without Content-Encoding: %s.", ce)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return nil, &quire.Error{Code: quire.EINVALID, Message: "The request body could not be read.", Err: err}
	}
	if len(body) > limit {
		return nil, quire.Errorf(quire.ETOOLARGE, "The request body is over %d bytes.", limit)
	}
	return body, nil
}

func decodeBytes(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return quire.Errorf(quire.EINVALID, "The request body is empty; send a JSON object.")
	}
	if json.Valid(body) { // the decoder says where malformed JSON goes wrong
		if err := strict(body, true); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return quire.Errorf(quire.EINVALID, "The request body has data after the JSON value.")
	}
	return nil
}

// level is an object or array that strict is inside of.
type level struct {
	object bool
	names  map[string]string // an object's member names so far, by key
	name   string            // an object's current member
	index  int               // an array's current element
}

// strict reads body, well-formed JSON, and refuses a string (a member name
// or a value) that is not valid UTF-8, which encoding/json would store
// with U+FFFD in its place, and a member name an object has twice, of
// which encoding/json would keep the last value; with fold, also two names
// that differ only in case, which encoding/json reads into one field. Each
// error names the member by its JSON pointer. It reads bytes rather than
// tokens: a 2 MiB configuration document of small objects takes 30 ms,
// where encoding/json's tokens took 130 ms and thirty times its size in
// garbage.
func strict(body []byte, fold bool) error {
	var stack []level
	for i := 0; i < len(body); i++ {
		var top *level
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch body[i] {
		case '{', '[':
			stack = append(stack, level{object: body[i] == '{'})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if !top.object {
				top.index++
			}
		case '"':
			end := i + 1
			for ; body[end] != '"'; end++ {
				if body[end] == '\\' {
					end++
				}
			}
			raw := body[i : end+1]
			i = end
			if top == nil || !top.object || !isName(body[end+1:]) {
				if !validString(raw) {
					return fieldError(pointer(stack), "is not valid UTF-8")
				}
				continue
			}
			if !validString(raw) {
				return fieldError(pointer(stack[:len(stack)-1]), "has a member name that is not valid UTF-8")
			}
			name := string(raw[1 : len(raw)-1])
			if bytes.IndexByte(raw, '\\') >= 0 {
				_ = json.Unmarshal(raw, &name) // raw is a well-formed JSON string: it unmarshals
			}
			key := name
			if fold {
				key = folded(name)
			}
			top.name = name
			if first, ok := top.names[key]; ok {
				if first != name {
					return fieldError(pointer(stack), fmt.Sprintf("appears twice in its object, once as %q", first))
				}
				return fieldError(pointer(stack), "appears twice in its object")
			}
			if top.names == nil {
				top.names = map[string]string{}
			}
			top.names[key] = name
		}
	}
	return nil
}

// validString reports whether raw, a well-formed JSON string as written,
// holds text encoding/json keeps as sent: valid UTF-8, and no escape of
// half a UTF-16 surrogate pair without the other ("\ud800" alone), which
// encoding/json would turn into U+FFFD as it does invalid bytes.
func validString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := bytes.IndexByte(raw, '\\'); i >= 0 && i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped byte
		if raw[i] != 'u' {
			continue
		}
		r := rune(hex4(raw[i+1:]))
		i += 4 // the last hex digit
		if !utf16.IsSurrogate(r) {
			continue
		}
		// A high surrogate, escaped, and its low one escaped right after.
		if r >= 0xdc00 || i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' ||
			utf16.DecodeRune(r, rune(hex4(raw[i+3:]))) == utf8.RuneError {
			return false
		}
		i += 6
	}
	return true
}

// hex4 reads the four hexadecimal digits that b starts with.
func hex4(b []byte) uint64 {
	n, _ := strconv.ParseUint(string(b[:4]), 16, 32)
	return n
}

// isName reports whether the string that rest follows is a member name:
// whether a colon comes next.
func isName(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t\r\n")
	return len(rest) > 0 && rest[0] == ':'
}

// folded returns the name that s and every name equal to it under Unicode
// case folding have in common: the name encoding/json matches s to a field
// by (bytes.EqualFold).
func folded(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// pointer is the JSON pointer (RFC 6901) of the value the innermost of
// stack is at.
func pointer(stack []level) string {
	var b strings.Builder
	for _, l := range stack {
		b.WriteByte('/')
		if l.object {
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(l.name))
		} else {
			b.WriteString(strconv.Itoa(l.index))
		}
	}
	return b.String()
}

// fieldError is an EINVALID naming the value at ptr, or the whole body.
func fieldError(ptr, detail string) error {
	if ptr == "" {
		return quire.Errorf(quire.EINVALID, "The request body %s.", detail)
	}
	return quire.Invalid(quire.FieldError{Pointer: ptr, Detail: detail})
}

// WholeNumber is the detail of a field error for an integer field (a
// quantity, an id) given another JSON number: with a fraction (1.5, even
// 2.0), an exponent (1e1), or beyond the field's range. A JSON Schema
// "integer" takes 2.0 and 1e1; Quire takes integers as written.
const WholeNumber = "must be a whole number, written without a fraction or an exponent"

func decodeError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		ptr := "/" + strings.ReplaceAll(te.Field, ".", "/")
		if te.Field == "" {
			ptr = ""
		}
		detail := "must be a JSON " + jsonKind(te.Type.Kind().String())
		switch {
		case te.Type == reflect.TypeFor[quire.Money]():
			detail = quire.ErrMoney.Error()
		case strings.HasPrefix(te.Value, "number") && strings.Contains(te.Type.Kind().String(), "int"):
			detail = WholeNumber
		}
		return fieldError(ptr, detail)
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return quire.Errorf(quire.EINVALID, "The request body is not valid JSON at byte %d: %s.", se.Offset, se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return quire.Errorf(quire.EINVALID, "The request body ends before its JSON value does.")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ := strconv.Unquote(name)
		return quire.Invalid(quire.FieldError{Pointer: "/" + field, Detail: "is not a field of this resource"})
	}
	// Errors from UnmarshalJSON methods that do not say of which field
	// (quire.Money's does).
	return &quire.Error{Code: quire.EINVALID, Message: "The request body is not valid: " + err.Error(), Err: err}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	default:
		return "number"
	}
}

func checkJSONMediaType(ct string) error {
	if ct == "" {
		return quire.Errorf(quire.EMEDIATYPE, "Send the body with Content-Type: application/json.")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return quire.Errorf(quire.EMEDIATYPE, "The Content-Type %q is not valid; send application/json.", ct)
	}
	if mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return quire.Errorf(quire.EMEDIATYPE, "The body must be application/json, not %s.", mt)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return quire.Errorf(quire.EMEDIATYPE, "The body must be UTF-8, not %s.", cs)
	}
	return nil
}

// JSON writes v as the JSON body of the response to r with the given status
// and an explicit Content-Type: the media type negotiated for r (see
// Version), or application/json. It fails only when v cannot be marshalled,
// which is a bug: the caller then has nothing written yet and can report it.
//
// A 200 answer to a GET (or HEAD) of a resource is conditional: its ETag is the one
// the handler set with SetETag (a stored resource), or else one made from
// the body and the Link header (a collection), and a matching
// If-None-Match gets 304 instead (see NotModified).
func JSON(w http.ResponseWriter, r *Request, status int, v any) error {
	resp, err := r.render(status, v)
	if err != nil {
		return err
	}
	if r.resource && (r.Method == http.MethodGet || r.Method == http.MethodHead) && status == http.StatusOK {
		tag := w.Header().Get("ETag")
		if tag == "" {
			tag = r.ETag(quire.HashBytes(slices.Concat(resp.Body, []byte(w.Header().Get("Link")))), false)
		}
		if done, err := NotModified(w, r.Request, tag); done || err != nil {
			return err
		}
	}
	Write(w, resp)
	return nil
}

// SetETag sets the ETag of the answer to r, a representation of stored
// content whose content hash is hash.
func SetETag(w http.ResponseWriter, r *Request, hash string) {
	w.Header().Set("ETag", r.ETag(hash, false))
}
