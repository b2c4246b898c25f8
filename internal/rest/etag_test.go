package rest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
)

const hash = "AbCdEfGhIjKlMnOpQrSt-_" // quire.HashLen characters

func TestParseTags(t *testing.T) {
	for _, tc := range []struct {
		value string
		tags  []EntityTag
		any   bool
		ok    bool
	}{
		{`"a"`, []EntityTag{{false, "a"}}, false, true},
		{`W/"a"`, []EntityTag{{true, "a"}}, false, true},
		{`"a", W/"b" ,"c"`, []EntityTag{{false, "a"}, {true, "b"}, {false, "c"}}, false, true},
		{`"a",,`, []EntityTag{{false, "a"}}, false, true},
		{`""`, []EntityTag{{false, ""}}, false, true},
		{" * ", nil, true, true},
		{"", nil, false, false},
		{"a", nil, false, false},
		{`"a`, nil, false, false},
		{`w/"a"`, nil, false, false},
		{`"a" "b"`, nil, false, false},
		{`"a b"`, nil, false, false},
		{`*, "a"`, nil, false, false},
	} {
		tags, any, ok := ParseTags(tc.value)
		if diff := cmp.Diff(tc.tags, tags); diff != "" || any != tc.any || ok != tc.ok {
			t.Errorf("ParseTags(%q) = %v %v %v; want %v %v %v", tc.value, tags, any, ok, tc.tags, tc.any, tc.ok)
		}
	}
}

func FuzzParseTags(f *testing.F) {
	for _, s := range []string{`"a"`, `W/"a", "b"`, "*", `"a`, "", `W/`, "\"\x80\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, any, ok := ParseTags(s)
		if !ok && (tags != nil || any) {
			t.Fatalf("ParseTags(%q) failed but returned %v %v", s, tags, any)
		}
		for _, tag := range tags {
			if strings.ContainsAny(tag.Opaque, "\" \t") {
				t.Fatalf("ParseTags(%q): opaque tag %q", s, tag.Opaque)
			}
		}
		if ok && !any { // what parses round-trips
			var parts []string
			for _, tag := range tags {
				p := `"` + tag.Opaque + `"`
				if tag.Weak {
					p = "W/" + p
				}
				parts = append(parts, p)
			}
			again, _, ok2 := ParseTags(strings.Join(parts, ", "))
			if !ok2 || !slices.Equal(again, tags) {
				t.Fatalf("ParseTags(%q) = %v, which does not round-trip", s, tags)
			}
		}
	})
}

func request(header ...string) *http.Request {
	r := httptest.NewRequest("GET", "/config", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	return r
}

func TestNotModified(t *testing.T) {
	tag := `"` + hash + `-v1"`
	for _, tc := range []struct {
		header []string
		status int // 0: not done
		code   string
	}{
		{nil, 0, ""},
		{[]string{"If-None-Match", tag}, 304, ""},
		{[]string{"If-None-Match", "W/" + tag}, 304, ""},
		{[]string{"If-None-Match", `"x", ` + tag}, 304, ""},
		{[]string{"If-None-Match", `"x"`, "If-None-Match", tag}, 304, ""},
		{[]string{"If-None-Match", "*"}, 304, ""},
		{[]string{"If-None-Match", `"` + hash + `-v1-gzip"`}, 0, ""},
		{[]string{"If-None-Match", "nonsense"}, 0, quire.EINVALID},
		{[]string{"If-None-Match", "*", "If-None-Match", tag}, 0, quire.EINVALID},
		{[]string{"If-Match", tag}, 0, ""},
		{[]string{"If-Match", "*"}, 0, ""},
		{[]string{"If-Match", "W/" + tag}, 0, quire.EPRECONDITION}, // strong comparison
		{[]string{"If-Match", `"x"`}, 0, quire.EPRECONDITION},
	} {
		w := httptest.NewRecorder()
		done, err := NotModified(w, request(tc.header...), tag)
		if quire.ErrorCode(err) != tc.code || done != (tc.status != 0) {
			t.Errorf("%q: done %v, err %v; want status %d, code %q", tc.header, done, err, tc.status, tc.code)
			continue
		}
		if done && (w.Code != tc.status || w.Body.Len() != 0 || w.Header().Get("ETag") != tag || w.Header().Get("Cache-Control") != "no-store") {
			t.Errorf("%q: %d %v %q", tc.header, w.Code, w.Header(), w.Body)
		}
	}
}

func TestPrecondition(t *testing.T) {
	strong := `"` + hash + `-v2-gzip"`
	for _, tc := range []struct {
		header []string
		want   quire.Precondition
		code   string
	}{
		{nil, quire.Precondition{}, ""},
		{[]string{"If-Match", strong}, quire.Precondition{Match: []string{hash}}, ""},
		{[]string{"If-Match", `"x", ` + strong}, quire.Precondition{Match: []string{hash}}, ""},
		{[]string{"If-Match", "W/" + strong}, quire.Precondition{Match: []string{""}}, ""},
		{[]string{"If-Match", `"` + hash + `-v3"`}, quire.Precondition{Match: []string{""}}, ""},
		{[]string{"If-Match", `"` + hash + `-v01"`}, quire.Precondition{Match: []string{""}}, ""},
		{[]string{"If-Match", "*"}, quire.Precondition{Exists: true}, ""},
		{[]string{"If-None-Match", "*"}, quire.Precondition{Absent: true}, ""},
		{[]string{"If-None-Match", "W/" + strong}, quire.Precondition{NoneOf: []string{hash}}, ""},
		{[]string{"If-Match", "bad"}, quire.Precondition{}, quire.EINVALID},
	} {
		r := request(tc.header...)
		r.Method = "PUT"
		p, err := Precondition(r)
		if quire.ErrorCode(err) != tc.code {
			t.Errorf("%q: err %v, want %q", tc.header, err, tc.code)
		}
		if diff := cmp.Diff(tc.want, p); err == nil && diff != "" {
			t.Errorf("%q: %s", tc.header, diff)
		}
	}
}

func TestPreconditionCheck(t *testing.T) {
	for _, tc := range []struct {
		p    quire.Precondition
		hash string // "" when the resource does not exist
		ok   bool
	}{
		{quire.Precondition{}, "", true},
		{quire.Precondition{}, "h", true},
		{quire.Precondition{Match: []string{"h"}}, "h", true},
		{quire.Precondition{Match: []string{"g"}}, "h", false},
		{quire.Precondition{Match: []string{""}}, "", false},
		{quire.Precondition{Match: []string{""}}, "h", false},
		{quire.Precondition{Exists: true}, "h", true},
		{quire.Precondition{Exists: true}, "", false},
		{quire.Precondition{Absent: true}, "", true},
		{quire.Precondition{Absent: true}, "h", false},
		{quire.Precondition{NoneOf: []string{"h"}}, "h", false},
		{quire.Precondition{NoneOf: []string{"h"}}, "g", true},
	} {
		err := tc.p.Check(tc.hash)
		if (err == nil) != tc.ok || (err != nil && quire.ErrorCode(err) != quire.EPRECONDITION) {
			t.Errorf("%+v.Check(%q) = %v, want ok %v", tc.p, tc.hash, err, tc.ok)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for value, want := range map[string]bool{
		"":                        false,
		"gzip":                    true,
		"GZIP":                    true,
		"x-gzip":                  true,
		"br, gzip;q=0.5":          true,
		"gzip;q=0":                false,
		"gzip;q=0, *":             false,
		"*":                       true,
		"*;q=0":                   false,
		"identity":                false,
		"gzip;q=2":                false, // not a qvalue: left out
		"deflate, identity;q=0.1": false,
	} {
		if got, err := AcceptsGzip(request("Accept-Encoding", value)); got != want || err != nil {
			t.Errorf("Accept-Encoding %q: %v, %v, want %v", value, got, err, want)
		}
	}
	long := "gzip, " + strings.Repeat("a", MaxHeaderLen)
	if _, err := AcceptsGzip(request("Accept-Encoding", long)); quire.ErrorCode(err) != quire.EINVALID {
		t.Errorf("Accept-Encoding over %d bytes: %v, want EINVALID", MaxHeaderLen, err)
	}
}

func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0.5, *;q=0", "br;;q=", ";q=1", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = AcceptsGzip(request("Accept-Encoding", s)) // never panics
		if strings.Contains(strings.ToLower(s), "gzip") || len(s) > MaxHeaderLen/2 {
			return
		}
		// Where s does not name gzip, naming it decides, whatever else s says.
		refused, _ := AcceptsGzip(request("Accept-Encoding", "gzip;q=0, "+s))
		taken, _ := AcceptsGzip(request("Accept-Encoding", "gzip, "+s))
		if refused || !taken {
			t.Fatalf("naming gzip does not decide against %q", s)
		}
	})
}

func TestETagsDifferPerRepresentation(t *testing.T) {
	v1 := Tag(hash, 1, false)
	gz := Tag(hash, 1, true)
	if v1 != `"`+hash+`-v1"` || gz != `"`+hash+`-v1-gzip"` {
		t.Errorf("ETag = %s, %s", v1, gz)
	}
	for _, tag := range []string{v1, gz} {
		tags, _, ok := ParseTags(tag)
		if !ok {
			t.Fatalf("%s does not parse", tag)
		}
		if h, ok := tagHash(tags[0]); !ok || h != hash {
			t.Errorf("tagHash(%s) = %q %v", tag, h, ok)
		}
	}
}
