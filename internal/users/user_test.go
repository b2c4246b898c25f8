package users

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
)

func TestNewUser(t *testing.T) {
	u, err := Fields{Email: ptr("  ada@example.com "), FirstName: ptr(" Ada"), LastName: ptr("Lovelace"),
		Password: ptr("correct horse"), Role: ptr(quire.RoleAdmin), Status: ptr(StatusClosed)}.SignUp(1)
	if err != nil {
		t.Fatal(err)
	}
	want := &User{Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", Role: quire.RoleCustomer, Status: StatusActive}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func fe(pointer, detail string) quire.FieldError {
	return quire.FieldError{Pointer: pointer, Detail: detail}
}

func TestFieldsErrors(t *testing.T) {
	wrong := Fields{
		Email: ptr("Ada <ada@example.com>"), FirstName: ptr(" "), LastName: ptr(strings.Repeat("é", 101)),
		Role: ptr(quire.Role("root")), Status: ptr(Status("active")), Password: ptr("short"),
	}
	for _, tc := range []struct {
		name  string
		f     Fields
		admin bool
		want  []quire.FieldError
	}{
		{"all missing, admin", Fields{}, true, []quire.FieldError{
			fe("/email", "is required"), fe("/first_name", "is required"), fe("/last_name", "is required"),
			fe("/role", "is required"), fe("/status", "is required"),
		}},
		{"all missing, customer", Fields{}, false, []quire.FieldError{
			fe("/email", "is required"), fe("/first_name", "is required"), fe("/last_name", "is required"),
		}},
		{"all wrong, admin", wrong, true, []quire.FieldError{
			fe("/email", "must be an email address such as ada@example.com"),
			fe("/first_name", "must not be empty"),
			fe("/last_name", "must be at most 100 characters"),
			fe("/password", "must be at least 8 characters"),
			fe("/role", `must be "customer" or "admin"`),
			fe("/status", `must be "ACTIVE" or "CLOSED"`),
		}},
		{"all wrong, customer: role and status ignored", wrong, false, []quire.FieldError{
			fe("/email", "must be an email address such as ada@example.com"),
			fe("/first_name", "must not be empty"),
			fe("/last_name", "must be at most 100 characters"),
			fe("/password", "must be at least 8 characters"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.f.User(1, tc.admin)
			e, ok := errors.AsType[*quire.Error](err)
			if !ok || e.Code != quire.EINVALID {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tc.want, e.Fields); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestEmail(t *testing.T) {
	for _, ok := range []string{"a@b.co", "first.last+tag@sub.example.org", strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com"} {
		if _, err := normalizeEmail(ok); err != nil {
			t.Errorf("normalizeEmail(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "a@", "@b.co", "a@b", "a b@c.de", "<a@b.co>", "Ada <a@b.co>", "a@b.co, c@d.ef",
		strings.Repeat("a", 250) + "@b.co", "a\n@b.co", "ad\u200bmin@b.co", "a\u202e@b.co"} {
		if _, err := normalizeEmail(bad); err == nil {
			t.Errorf("normalizeEmail(%q) accepted", bad)
		}
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"Ada": "", "Zoë": "", strings.Repeat("x", 100): "", "": "must not be empty",
		"a\tb":      "must not contain U+0009, a control, format or invisible character",
		"Ada\u202e": "must not contain U+202E, a control, format or invisible character",
	} {
		if got := checkName(in); got != want {
			t.Errorf("checkName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzFields checks that any body either becomes a valid user or is
// rejected with a client error, and never panics.
func FuzzFields(f *testing.F) {
	for _, s := range []string{
		`{"email":"a@b.co","first_name":"A","last_name":"B","password":"12345678"}`,
		`{"email":"Ada <a@b.co>","first_name":"\u0000","last_name":"B","role":"admin","status":"CLOSED"}`,
		`{"email":null,"balance":"x","id":{}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/users", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var fs Fields
		if err := rest.Decode(r, &fs); err != nil {
			return
		}
		u, err := fs.SignUp(1)
		if err != nil {
			if quire.ErrorCode(err) != quire.EINVALID {
				t.Fatalf("SignUp(%s): %v", body, err)
			}
			return
		}
		if u.Email == "" || u.FirstName == "" || u.LastName == "" || len(u.Email) > MaxEmailLen || u.Role != quire.RoleCustomer {
			t.Fatalf("SignUp(%s) accepted %+v", body, u)
		}
	})
}

// TestProfileText: a bio may have lines; no field has a character that is
// not shown as itself.
func TestProfileText(t *testing.T) {
	for _, tc := range []struct {
		p    Profile
		want []string // the fields refused
	}{
		{Profile{Bio: "First line.\nSecond line.", Location: "Paris", Website: "https://example.com/"}, nil},
		{Profile{Bio: "a\tb", Location: "Paris\nFrance", Website: "https://example.com/\u202e"}, []string{"/bio", "/location", "/website"}},
		{Profile{Bio: "a\r\nb", Location: "\u200bParis"}, []string{"/bio", "/location"}},
	} {
		var got []string
		if _, err := tc.p.Check(); err != nil {
			e, _ := errors.AsType[*quire.Error](err)
			for _, f := range e.Fields {
				got = append(got, f.Pointer)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v: refused (-want +got):\n%s", tc.p, diff)
		}
	}
}

// FuzzProfile: what check accepts is trimmed, within the bounds, and one
// line but for the bio.
func FuzzProfile(f *testing.F) {
	f.Add("Wrote the first program.", "London", "https://example.com/ada")
	f.Add(" ", "a\x00b", "ftp://x")
	f.Fuzz(func(t *testing.T, bio, location, website string) {
		p, err := Profile{Bio: bio, Location: location, Website: website}.Check()
		if err != nil {
			return
		}
		for _, s := range []string{p.Bio, p.Location, p.Website} {
			if s != strings.TrimSpace(s) || !utf8.ValidString(s) {
				t.Fatalf("accepted %q", s)
			}
		}
		if utf8.RuneCountInString(p.Bio) > MaxBioLen || utf8.RuneCountInString(p.Location) > MaxLocationLen || utf8.RuneCountInString(p.Website) > MaxWebsiteLen {
			t.Fatalf("accepted %+v beyond the bounds", p)
		}
		if w := strings.ToLower(p.Website); w != "" && !strings.HasPrefix(w, "http://") && !strings.HasPrefix(w, "https://") {
			t.Fatalf("accepted website %q", p.Website)
		}
		if strings.ContainsAny(p.Location+p.Website, "\n\r") {
			t.Fatalf("accepted %+v with lines where one is due", p)
		}
	})
}
