package secrets

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quireapi/quire/internal/awsenv"
)

// fake is a Secrets Manager that answers each call with answer, and
// records what it was sent.
type fake struct {
	calls  atomic.Int32
	answer func(n int32) (int, string)
	got    []*http.Request
	bodies []map[string]string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	var body map[string]string
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	f.got, f.bodies = append(f.got, r), append(f.bodies, body)
	status, answer := f.answer(n)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

// secret returns the secret "quire/keys" of a fake Secrets Manager.
func secret(t *testing.T, f *fake) *Secret {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := New(awsenv.Env{Region: "eu-west-1", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "token"}, "quire/keys")
	if err != nil {
		t.Fatal(err)
	}
	s.endpoint = srv.URL
	s.client = srv.Client()
	return s
}

// authorization is a Signature Version 4 header for Secrets Manager in
// eu-west-1, signed by AKIDEXAMPLE, that signs the host, the target and
// the date.
var authorization = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-west-1/secretsmanager/aws4_request, ` +
	`SignedHeaders=[a-z0-9;-]*host;[a-z0-9;-]*x-amz-date;x-amz-security-token;x-amz-target, Signature=[0-9a-f]{64}$`)

// Load and Save send Secrets Manager's JSON calls, signed as the SDK signs
// them, with the session token, and read their answers.
func TestCalls(t *testing.T) {
	f := &fake{answer: func(int32) (int, string) {
		return 200, `{"ARN":"arn","Name":"quire/keys","SecretString":"{\"keys\":[]}"}`
	}}
	s := secret(t, f)
	v, err := s.Load(t.Context())
	if err != nil || string(v) != `{"keys":[]}` {
		t.Fatalf("Load = %q, %v", v, err)
	}
	if err := s.Save(t.Context(), []byte(`{"keys":[1]}`)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		target string
		body   map[string]string
	}{
		{"secretsmanager.GetSecretValue", map[string]string{"SecretId": "quire/keys"}},
		{"secretsmanager.PutSecretValue", map[string]string{"SecretId": "quire/keys", "SecretString": `{"keys":[1]}`}},
	} {
		r := f.got[i]
		if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("X-Amz-Target") != want.target ||
			r.Header.Get("Content-Type") != "application/x-amz-json-1.1" || r.Header.Get("X-Amz-Security-Token") != "token" {
			t.Errorf("call %d: %s %s %v", i, r.Method, r.URL, r.Header)
		}
		if !authorization.MatchString(r.Header.Get("Authorization")) {
			t.Errorf("call %d: Authorization %q", i, r.Header.Get("Authorization"))
		}
		if len(f.bodies[i]) != len(want.body) || f.bodies[i]["SecretId"] != want.body["SecretId"] || f.bodies[i]["SecretString"] != want.body["SecretString"] {
			t.Errorf("call %d: body %v, want %v", i, f.bodies[i], want.body)
		}
	}
}

// A refusal is not made again; throttling and Secrets Manager's own
// failures are, up to three attempts in all.
func TestFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(n int32) (int, string)
		calls  int32
		fails  string
	}{
		{"no such secret", func(int32) (int, string) {
			return 400, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`
		}, 1, "ResourceNotFoundException (400): Secrets Manager can't find the specified secret."},
		{"throttled", func(int32) (int, string) {
			return 400, `{"__type":"com.amazonaws.secretsmanager#ThrottlingException","message":"Rate exceeded"}`
		}, 3, "ThrottlingException (400): Rate exceeded"},
		{"failing", func(int32) (int, string) { return 500, `not json` }, 3, "(500): Internal Server Error"},
		{"failing once", func(n int32) (int, string) {
			if n == 1 {
				return 503, `{"__type":"ServiceUnavailable","message":"later"}`
			}
			return 200, `{"SecretString":"v"}`
		}, 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fake{answer: c.answer}
			_, err := secret(t, f).Load(t.Context())
			if n := f.calls.Load(); n != c.calls {
				t.Errorf("%d calls, want %d", n, c.calls)
			}
			var answered *Error
			switch {
			case c.fails == "" && err != nil:
				t.Errorf("Load: %v", err)
			case c.fails != "" && (err == nil || !strings.HasSuffix(err.Error(), c.fails) || !errors.As(err, &answered)):
				t.Errorf("Load: %v, want an *Error ending %q", err, c.fails)
			}
		})
	}
}

// TestActions: Actions names the IAM action of each call a Secret makes,
// by its method, and no other (TestCalls holds each to the call's
// X-Amz-Target): the functions' roles are built from them (infra).
func TestActions(t *testing.T) {
	var methods []string
	for m := range reflect.TypeFor[*Secret]().Methods() {
		methods = append(methods, m.Name)
	}
	if named := slices.Sorted(maps.Keys(Actions)); !slices.Equal(methods, named) {
		t.Errorf("a Secret's methods %v, Actions names %v", methods, named)
	}
}
