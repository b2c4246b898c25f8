package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/demo"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/service"
)

// configRow is the cost of one request for the configuration document.
type configRow struct {
	doc, request string
	status       int
	body         int // bytes the client receives
	identity     int // the document's length, for the share gzip leaves
	median       time.Duration
	ops          []string
	capacity     float64
	write        float64 // a PUT's capacity units less its head read
	target       string  // "" when there is none
}

// configDoc is a document under measure: its name and compact JSON.
type configDoc struct {
	name string
	json []byte
}

// configCosts stores each document (the demo's is stored already) with PUT
// /admin/config, runs times, each over the demo's document, then reads it
// as is, gzip-compressed and conditionally, runs times each, interleaved,
// through the local gateway on cfg's tables, which hold the demo data.
//
// Each PUT replaces the demo's document, put back untimed before it: a PUT
// of the document stored already writes nothing.
func configCosts(cfg service.Config) ([]configRow, error) {
	l, err := newLocalAPI(cfg, false)
	if err != nil {
		return nil, err
	}
	small, err := config.Parse([]byte(demo.Config))
	if err != nil {
		return nil, err
	}
	smallJSON, err := config.Gunzip(small.Gzip, small.Head) // as stored: compact
	if err != nil {
		return nil, err
	}
	docs := []configDoc{
		{name: fmt.Sprintf("the demo's, %d B", small.Size)},
		{name: fmt.Sprintf("JSON, %d B", config.MaxBytes), json: shopJSON(config.MaxBytes)},
		{name: fmt.Sprintf("random strings, %d B", config.MaxBytes), json: randomJSON(config.MaxBytes)},
	}
	var rows []configRow
	smallRead := -1.0 // the capacity of the demo document's 304
	for _, d := range docs {
		stored := smallJSON
		var put *configRow
		if d.json != nil {
			if p, err := config.Parse(d.json); err != nil || p.Size != len(d.json) || len(d.json) != config.MaxBytes {
				return nil, fmt.Errorf("document %s: %d bytes, not %d of compact JSON (%v)", d.name, len(d.json), config.MaxBytes, err)
			}
			stored = d.json
			put = &configRow{doc: d.name, request: "`PUT /admin/config`, over the demo's", status: http.StatusNoContent}
			var times []time.Duration
			for range runs {
				if _, _, err := l.do("PUT", "/admin/config", string(smallJSON), "admin", nil, http.StatusNoContent); err != nil {
					return nil, err
				}
				l.counter.Take()
				_, took, err := l.do("PUT", "/admin/config", string(d.json), "admin", nil, put.status)
				if err != nil {
					return nil, err
				}
				times = append(times, took)
				put.ops, put.capacity = l.counter.Take()
			}
			put.median = median(times)
		}
		got, err := configGets(l, d.name, stored)
		if err != nil {
			return nil, err
		}
		conditional := &got[len(got)-1]
		if smallRead < 0 {
			smallRead = conditional.capacity
			conditional.target = "1 " + mark(len(conditional.ops) <= 1)
		} else {
			conditional.target = fmt.Sprintf("1, %.1f units as for %d B %s", smallRead, small.Size,
				mark(len(conditional.ops) <= 1 && conditional.capacity <= smallRead))
		}
		if put != nil {
			put.write = put.capacity - conditional.capacity // its head read is the 304's read
			rows = append(rows, *put)
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// configGets reads the stored document, which is doc, as is, with
// Accept-Encoding: gzip and with If-None-Match: the ETag of the first,
// runs times each, interleaved, and checks each answer.
func configGets(l *localAPI, name string, doc []byte) ([]configRow, error) {
	first, _, err := l.do("GET", "/config", "", "customer", nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	l.counter.Take()
	etag := first.Header().Get("ETag")
	rows := []configRow{
		{request: "`GET /config`", status: http.StatusOK},
		{request: "`GET /config`, Accept-Encoding: gzip", status: http.StatusOK},
		{request: "`GET /config`, If-None-Match: its ETag", status: http.StatusNotModified},
	}
	headers := []http.Header{nil, {"Accept-Encoding": {"gzip"}}, {"If-None-Match": {etag}}}
	checks := []func(*httptest.ResponseRecorder) error{
		func(rec *httptest.ResponseRecorder) error { return sameDoc(rec.Body.Bytes(), doc) },
		func(rec *httptest.ResponseRecorder) error {
			if ce := rec.Header().Get("Content-Encoding"); ce != "gzip" {
				return fmt.Errorf("Content-Encoding %q, want gzip", ce)
			}
			gz, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				return err
			}
			b, err := io.ReadAll(gz)
			if err != nil {
				return err
			}
			return sameDoc(b, doc)
		},
		func(rec *httptest.ResponseRecorder) error {
			if rec.Body.Len() != 0 {
				return fmt.Errorf("a 304 with a body of %d bytes", rec.Body.Len())
			}
			return nil
		},
	}
	times := make([][]time.Duration, len(rows))
	for range runs {
		for i := range rows {
			rec, took, err := l.do("GET", "/config", "", "customer", headers[i], rows[i].status)
			if err != nil {
				return nil, err
			}
			if err := checks[i](rec); err != nil {
				return nil, fmt.Errorf("%s %s: %w", name, rows[i].request, err)
			}
			times[i] = append(times[i], took)
			rows[i].body, rows[i].identity = rec.Body.Len(), len(doc)
			rows[i].ops, rows[i].capacity = l.counter.Take()
		}
	}
	for i := range rows {
		rows[i].doc, rows[i].median = name, median(times[i])
	}
	return rows, nil
}

func sameDoc(got, want []byte) error {
	if !bytes.Equal(got, want) {
		return fmt.Errorf("got %d bytes, not the %d stored", len(got), len(want))
	}
	return nil
}

// configETag is the ETag GET /config answers for doc as is.
func configETag(doc []byte) (string, error) {
	d, err := config.Parse(doc)
	if err != nil {
		return "", err
	}
	return rest.Tag(d.Hash, routes.Versions[0], false), nil
}

var words = strings.Fields(`the a of and in on for with new old red blue green black white garden sea river night day
	winter summer autumn spring house letters stories poems history guide book tales journey city island light shadow
	love war peace time world north south music art lost found last first little great secret silent wild open`)

// shopJSON returns a compact JSON object of exactly size bytes that reads
// like a shop's settings: an entry per product with a title, a price, a
// stock, flags, tags and a date, drawn from a seeded generator, so that gzip
// finds the repetition real JSON has.
func shopJSON(size int) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	word := func() string { return words[rng.IntN(len(words))] }
	zones := []string{"domestic", "europe", "world"}
	return fillJSON(size, func(i int) string {
		first := word()
		title := strings.ToUpper(first[:1]) + first[1:]
		for range 1 + rng.IntN(3) {
			title += " " + word()
		}
		return fmt.Sprintf(`"sku-%06d":{"title":%q,"price":%d.%02d,"stock":%d,"zone":%q,"tags":[%q,%q],"gift_wrap":%t,"updated":"2026-%02d-%02dT%02d:%02d:00Z"}`,
			i, title, 3+rng.IntN(60), rng.IntN(100), rng.IntN(500), zones[rng.IntN(len(zones))], word(), word(), rng.IntN(2) == 0,
			1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60))
	}, func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(word() + " ")
		}
		return b.String()[:n]
	})
}

// randomJSON returns a compact JSON object of exactly size bytes whose
// values are random printable ASCII, which gzip can hardly shrink.
func randomJSON(size int) []byte {
	rng := rand.New(rand.NewPCG(2, 2))
	const alphabet = " !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	return fillJSON(size, func(i int) string {
		return fmt.Sprintf(`"k%06d":"%s"`, i, random(100))
	}, random)
}

// fillJSON returns {entry(0),entry(1),...,"pad":pad(n)} with n such that
// it is exactly size bytes long.
func fillJSON(size int, entry func(int) string, pad func(int) string) []byte {
	const padOpen, padClose = `,"pad":"`, `"}`
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(`{`)
	for i := 0; ; i++ {
		e := entry(i)
		if b.Len()+len(e)+1+len(padOpen)+len(padClose) > size {
			break
		}
		b.WriteString(e + ",")
	}
	b.WriteString(padOpen[1:] + pad(size-b.Len()-len(padOpen)+1-len(padClose)) + padClose)
	return b.Bytes()
}
