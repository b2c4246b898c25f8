package config_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/quireapi/quire/internal/apigw"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/quiretest"
	"github.com/quireapi/quire/internal/testing/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// document returns a compact JSON object of exactly size bytes whose one
// string member is filled by fill, repeated.
func document(size int, fill string) string {
	head, tail := `{"settings":"`, `"}`
	n := size - len(head) - len(tail)
	return head + strings.Repeat(fill, n/len(fill)) + strings.Repeat("x", n%len(fill)) + tail
}

// random returns a compact JSON object of size bytes that gzip cannot
// shrink much: printable ASCII at random, without quotes or backslashes.
func random(size int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'()*+,-./:;<=>?@[]^_`{|}~ "
	head, tail := `{"noise":"`, `"}`
	b := make([]byte, size-len(head)-len(tail))
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return head + string(b) + tail
}

func gunzip(t *testing.T, b string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

type env struct {
	api             *servicetest.API
	admin, customer *servicetest.Client
	reads           *dynamotest.Counter
	clock           *quiretest.Clock // the config function's
}

// newEnv runs Quire with opts, its config function on a clock of the
// test's (see clocked) and its DynamoDB requests counted.
func newEnv(t *testing.T, opts ...servicetest.Option) *env {
	t.Helper()
	c, clk := &dynamotest.Counter{}, newClock()
	opts = append(opts, servicetest.Option{Config: func(cfg *service.Config) {
		cfg.DynamoDBOptions = append(cfg.DynamoDBOptions, c.Option)
	}})
	api := servicetest.New(t, clocked(t, clk, opts...)...)
	return &env{api: api, admin: api.As(t, 1, quire.RoleAdmin), customer: api.As(t, 2, quire.RoleCustomer), reads: c, clock: clk}
}

// put stores doc as the admin and returns the new ETag.
func (e *env) put(t *testing.T, doc string, status int, header ...string) string {
	t.Helper()
	r := e.admin.Do(t, "PUT", "/admin/config", doc, header...)
	if r.StatusCode != status {
		t.Fatalf("PUT /admin/config = %d %s, want %d", r.StatusCode, r.Body, status)
	}
	return r.Header.Get("ETag")
}

// stored returns the document a customer reads, uncompressed.
func (e *env) stored(t *testing.T) string {
	t.Helper()
	r := e.customer.Do(t, "GET", "/config", "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /config = %d %s", r.StatusCode, r.Body)
	}
	return r.Body
}

func TestLargestDocumentRoundTrips(t *testing.T) {
	e := newEnv(t)
	doc := random(config.MaxBytes)
	tag := e.put(t, doc, http.StatusCreated)

	r := e.customer.Do(t, "GET", "/config", "")
	if r.StatusCode != http.StatusOK || r.Body != doc {
		t.Fatalf("GET /config = %d with %d bytes; want 200 with the %d bytes stored", r.StatusCode, len(r.Body), len(doc))
	}
	if r.Header.Get("ETag") != tag || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Content-Encoding") != "" {
		t.Errorf("headers %v; want ETag %s, application/json, no Content-Encoding", r.Header, tag)
	}
	if vary := strings.Join(r.Header.Values("Vary"), ", "); !strings.Contains(vary, "Accept") || !strings.Contains(vary, "Accept-Encoding") {
		t.Errorf("Vary = %q", vary)
	}

	// Under another version, the same document is another representation.
	v2 := e.customer.Do(t, "GET", "/api/v2/config", "")
	if v2.Body != doc || v2.Header.Get("ETag") == tag || v2.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /api/v2/config: ETag %s (v1's %s), Content-Type %s", v2.Header.Get("ETag"), tag, v2.Header.Get("Content-Type"))
	}

	// Replacing it with another as large leaves no chunk of the first behind.
	other := random(config.MaxBytes)
	e.put(t, other, http.StatusNoContent)
	if got := e.stored(t); got != other {
		t.Fatalf("after a replacement, GET answers %d bytes, not the %d stored", len(got), len(other))
	}
	onlyHeadChunks(t, e.api)
}

func TestGzipIsServedAsStored(t *testing.T) {
	e := newEnv(t, servicetest.Option{DynamoDB: true}) // reads DynamoDB's items, counts its requests
	doc := document(1<<20, "a setting, and then another; ")
	tag := e.put(t, doc, http.StatusCreated)

	r := e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", "gzip")
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET /config with gzip = %d, Content-Encoding %q", r.StatusCode, r.Header.Get("Content-Encoding"))
	}
	if got := gunzip(t, r.Body); got != doc {
		t.Fatalf("gunzipped body has %d bytes, differs from the %d stored", len(got), len(doc))
	}
	if len(r.Body) > len(doc)/20 {
		t.Errorf("gzip body %d bytes for a %d-byte repetitive document", len(r.Body), len(doc))
	}
	gzTag := r.Header.Get("ETag")
	if gzTag == tag || !strings.HasSuffix(gzTag, `-gzip"`) {
		t.Errorf("gzip ETag %s, identity %s: two representations, two tags", gzTag, tag)
	}
	// The bytes served are the bytes stored: nothing is compressed on a GET.
	if stored := storedGzip(t, e.api); r.Body != string(stored) {
		t.Errorf("served gzip (%d bytes) is not the stored gzip (%d bytes)", len(r.Body), len(stored))
	}
	// x-gzip, q-values and * count; gzip;q=0 and identity do not.
	for ae, gz := range map[string]bool{"x-gzip": true, "br;q=1, gzip;q=0.5": true, "*": true, "gzip;q=0": false, "identity": false, "*;q=0": false} {
		r := e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", ae)
		if (r.Header.Get("Content-Encoding") == "gzip") != gz {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", ae, r.Header.Get("Content-Encoding"))
		}
	}
}

// storedGzip reads the stored chunks of the document straight from DynamoDB.
func storedGzip(t *testing.T, api *servicetest.API) []byte {
	t.Helper()
	table := api.Tables.Physical(routes.TableConfig)
	head, err := api.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &table, Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "config"}},
	})
	if err != nil || head.Item == nil {
		t.Fatalf("head: %v", err)
	}
	gen := head.Item["generation"].(*types.AttributeValueMemberS).Value
	var out []byte
	for i := 0; ; i++ {
		item, err := api.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
			TableName: &table, Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("config#%s#%d", gen, i)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if item.Item == nil {
			return out
		}
		out = append(out, item.Item["data"].(*types.AttributeValueMemberB).Value...)
	}
}

// A 304 reads the head at most, whatever the document's size: once the
// head held is Staleness old, one consistent GetItem of one unit; within
// Staleness, nothing.
func TestNotModifiedReadsTheHashOnly(t *testing.T) {
	dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	for _, size := range []int{100, config.MaxBytes} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			e := newEnv(t, servicetest.Option{DynamoDB: true}) // reads DynamoDB's items, counts its requests
			e.put(t, random(size), http.StatusCreated)
			for _, gz := range []string{"", "gzip"} {
				r := e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", gz)
				tag := r.Header.Get("ETag")
				for _, c := range []struct {
					wait     time.Duration
					ops      string
					capacity float64
				}{{config.Staleness, "GetItem", 1}, {0, "", 0}} {
					e.clock.Add(c.wait)
					e.reads.Take()
					r = e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", gz, "If-None-Match", tag)
					if r.StatusCode != http.StatusNotModified || r.Body != "" || r.Header.Get("ETag") != tag {
						t.Fatalf("conditional GET (%q) = %d, ETag %s, %d bytes; want 304, %s, none", gz, r.StatusCode, r.Header.Get("ETag"), len(r.Body), tag)
					}
					ops, capacity := e.reads.Take()
					if strings.Join(ops, ",") != c.ops || capacity != c.capacity {
						t.Errorf("304 of a %d-byte document %v after the head was read: %v, %.1f capacity units; want [%s] of %.1f",
							size, c.wait, ops, capacity, c.ops, c.capacity)
					}
				}
			}
		})
	}
}

func TestIfNoneMatch(t *testing.T) {
	e := newEnv(t)
	tag := e.put(t, `{"a": 1}`, http.StatusCreated)
	weak := "W/" + tag
	for value, status := range map[string]int{
		tag:                                   http.StatusNotModified,
		weak:                                  http.StatusNotModified, // weak comparison
		`"other-v1", ` + tag:                  http.StatusNotModified,
		"*":                                   http.StatusNotModified,
		`"other-v1"`:                          http.StatusOK,
		strings.Replace(tag, "-v1", "-v2", 1): http.StatusOK,
		"not a tag":                           http.StatusBadRequest,
	} {
		r := e.customer.Do(t, "GET", "/config", "", "If-None-Match", value)
		if r.StatusCode != status {
			t.Errorf("If-None-Match %s = %d %s, want %d", value, r.StatusCode, r.Body, status)
		}
		if status == http.StatusNotModified {
			h := r.Header
			if h.Get("ETag") != tag || h.Get("Cache-Control") != "private, no-cache" || len(h.Values("Vary")) == 0 || h.Get("Content-Type") != "" {
				t.Errorf("304 headers %v", h)
			}
		}
	}
	// After a change, the old tag no longer matches.
	newTag := e.put(t, `{"a": 2}`, http.StatusNoContent)
	if newTag == tag {
		t.Fatalf("ETag %s did not change with the document", tag)
	}
	r := e.customer.Do(t, "GET", "/config", "", "If-None-Match", tag)
	if r.StatusCode != http.StatusOK || r.Header.Get("ETag") != newTag || r.Body != `{"a":2}` {
		t.Errorf("GET with the old tag = %d %s %s; want 200 %s", r.StatusCode, r.Header.Get("ETag"), r.Body, newTag)
	}
}

func TestPreconditions(t *testing.T) {
	e := newEnv(t)
	// Create-only: If-None-Match: *.
	tag := e.put(t, `{"v":1}`, http.StatusCreated, "If-None-Match", "*")
	e.put(t, `{"v":99}`, http.StatusPreconditionFailed, "If-None-Match", "*")
	// If-Match with the current tag replaces; with the old one, or weak, fails.
	tag2 := e.put(t, `{"v":2}`, http.StatusNoContent, "If-Match", tag)
	for _, stale := range []string{tag, "W/" + tag2, `"something-else"`} {
		r := e.admin.Do(t, "PUT", "/admin/config", `{"v":3}`, "If-Match", stale)
		if r.StatusCode != http.StatusPreconditionFailed || r.Header.Get("Content-Type") != rest.ProblemMediaType {
			t.Errorf("If-Match %s = %d %s; want 412 problem", stale, r.StatusCode, r.Body)
		}
	}
	// A tag of any representation of the current document serves: the
	// gzip one, or v2's.
	gzTag := e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", "gzip").Header.Get("ETag")
	tag3 := e.put(t, `{"v":3}`, http.StatusNoContent, "If-Match", gzTag)
	e.put(t, `{"v":4}`, http.StatusNoContent, "If-Match", `"nope", `+strings.Replace(tag3, "-v1", "-v2", 1))
	if got := e.stored(t); got != `{"v":4}` {
		t.Errorf("stored %s, want {\"v\":4}", got)
	}
}

func TestPreconditionOnMissingDocument(t *testing.T) {
	e := newEnv(t)
	r := e.customer.Do(t, "GET", "/config", "")
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /config with none stored = %d", r.StatusCode)
	}
	e.put(t, `{"v":1}`, http.StatusPreconditionFailed, "If-Match", "*")
	e.put(t, `{"v":1}`, http.StatusPreconditionFailed, "If-Match", `"AAAAAAAAAAAAAAAAAAAAAA-v1"`)
	if r := e.customer.Do(t, "GET", "/config", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("after failed preconditions, GET /config = %d %s; want 404", r.StatusCode, r.Body)
	}
}

// Writers holding the same ETag race: DynamoDB's condition on the stored
// hash lets exactly one win.
func TestConcurrentWritersOneWins(t *testing.T) {
	e := newEnv(t)
	tag := e.put(t, `{"v":0}`, http.StatusCreated)
	const writers = 8
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			statuses[i] = e.admin.Do(t, "PUT", "/admin/config", fmt.Sprintf(`{"writer":%d}`, i), "If-Match", tag).StatusCode
		})
	}
	wg.Wait()
	winner := -1
	for i, s := range statuses {
		switch s {
		case http.StatusNoContent:
			if winner >= 0 {
				t.Fatalf("writers %d and %d both won: %v", winner, i, statuses)
			}
			winner = i
		case http.StatusPreconditionFailed:
		default:
			t.Fatalf("statuses %v; want one 204 and 412s", statuses)
		}
	}
	if winner < 0 {
		t.Fatalf("statuses %v: nobody won", statuses)
	}
	if got, want := e.stored(t), fmt.Sprintf(`{"writer":%d}`, winner); got != want {
		t.Errorf("stored %s, want the winner's %s", got, want)
	}
	onlyHeadChunks(t, e.api) // the losers wrote no chunk
}

func TestBadDocumentsChangeNothing(t *testing.T) {
	e := newEnv(t)
	e.put(t, `{"kept": true}`, http.StatusCreated)
	for _, c := range []struct {
		name, body, contentType, encoding string
		status                            int
	}{
		{"over 2 MiB", random(config.MaxBytes + 1), "application/json", "", http.StatusRequestEntityTooLarge},
		{"not JSON", `{"a": }`, "application/json", "", http.StatusBadRequest},
		{"trailing data", `{"a": 1} {}`, "application/json", "", http.StatusBadRequest},
		{"an array", `[1, 2]`, "application/json", "", http.StatusBadRequest},
		{"a string", `"settings"`, "application/json", "", http.StatusBadRequest},
		{"invalid UTF-8", "{\"a\": \"\xff\"}", "application/json", "", http.StatusBadRequest},
		{"invalid UTF-8 in a name", "{\"b\": {\"\xff\": 1}}", "application/json", "", http.StatusBadRequest},
		{"a member twice", `{"a": {"b": 1, "b": 2}}`, "application/json", "", http.StatusBadRequest},
		{"text", `{"a": 1}`, "text/plain", "", http.StatusUnsupportedMediaType},
		{"compressed", `{"a": 1}`, "application/json", "gzip", http.StatusUnsupportedMediaType},
	} {
		t.Run(c.name, func(t *testing.T) {
			header := []string{"Content-Type", c.contentType}
			if c.encoding != "" {
				header = append(header, "Content-Encoding", c.encoding)
			}
			r := e.admin.Do(t, "PUT", "/admin/config", c.body, header...)
			if r.StatusCode != c.status || r.Header.Get("Content-Type") != rest.ProblemMediaType {
				t.Errorf("= %d %s %.200s; want %d problem", r.StatusCode, r.Header.Get("Content-Type"), r.Body, c.status)
			}
		})
	}
	if r := e.customer.Do(t, "PUT", "/admin/config", `{"a": 1}`); r.StatusCode != http.StatusForbidden {
		t.Errorf("customer PUT = %d", r.StatusCode)
	}
	if got := e.stored(t); got != `{"kept":true}` {
		t.Errorf("stored %s after bad writes", got)
	}
}

// The largest document, in its worst shapes, fits Lambda's 6 MB response
// payload in every encoding it is served in: the proxy response is
// measured as the Lambda runtime marshals it.
func TestLargestResponsesFitLambda(t *testing.T) {
	const lambdaLimit = 6 * 1024 * 1024
	var mu sync.Mutex
	sizes := map[string]int{}
	var current string
	e := newEnv(t, servicetest.Option{Functions: func(fns map[string]apigw.Handler) {
		fn := fns[routes.GroupConfig]
		fns[routes.GroupConfig] = func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			resp, err := fn(ctx, ev)
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false) // as aws-lambda-go marshals responses
			if err := enc.Encode(resp); err != nil {
				return resp, err
			}
			mu.Lock()
			sizes[current] = b.Len()
			mu.Unlock()
			return resp, err
		}
	}})
	for name, doc := range map[string]string{
		"escapes":        document(config.MaxBytes, `\"`),     // every byte escaped again in the payload
		"line separator": document(config.MaxBytes, "\u2028"), // 3 bytes, 6 once escaped
		"incompressible": random(config.MaxBytes),
	} {
		e.put(t, doc, map[bool]int{true: http.StatusCreated, false: http.StatusNoContent}[len(sizes) == 0])
		for _, gz := range []string{"", "gzip"} {
			current = name + " " + gz
			r := e.customer.Do(t, "GET", "/config", "", "Accept-Encoding", gz)
			body := r.Body
			if gz != "" {
				body = gunzip(t, body)
			}
			if r.StatusCode != http.StatusOK || body != doc {
				t.Fatalf("%s: GET = %d, %d bytes", current, r.StatusCode, len(body))
			}
			if sizes[current] >= lambdaLimit {
				t.Errorf("%s: the Lambda response is %d bytes, over %d", current, sizes[current], lambdaLimit)
			}
			t.Logf("%s: document %d bytes, Lambda response %d bytes", current, len(doc), sizes[current])
		}
	}
}
