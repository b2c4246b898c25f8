// Package markdown reads what the tests of the manual check in its pages:
// the rows of a table, and the names a cell gives in backticks.
package markdown

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Row is a row of a table: its cells, trimmed, and the page and line it
// is on.
type Row struct {
	Page  string
	Line  int
	Cells []string
}

// String names the row as an editor finds it: "docs/operating.md:132".
func (r Row) String() string { return r.Page + ":" + strconv.Itoa(r.Line) }

var (
	fence     = regexp.MustCompile("^\\s*```")
	delimiter = regexp.MustCompile(`^[\s|:-]+$`)
	code      = regexp.MustCompile("`([^`]+)`")
)

// MustTable is Table for a test: it stops tb when the page has no such
// table, and fails it for each row of another shape, going on with the
// other rows.
func MustTable(tb testing.TB, path string, header ...string) []Row {
	tb.Helper()
	rows, err := Table(path, header...)
	if rows == nil && err != nil {
		tb.Fatal(err)
	} else if err != nil {
		tb.Error(err)
	}
	return rows
}

// Table returns the rows of the first table of the page at path, outside
// code, whose header has the cells header (as written, backticks
// included); a table may be indented, as in a list item. It returns an
// error when the page has no such table, or has a row with another number
// of cells than the header (naming each), with the other rows.
func Table(path string, header ...string) ([]Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var (
		out     []Row
		errs    []error
		inCode  bool
		inTable bool
	)
	for i, line := range strings.Split(string(b), "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		trimmed := strings.TrimSpace(line)
		if inCode || !strings.HasPrefix(trimmed, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := cellsOf(trimmed)
		switch {
		case inTable && delimiter.MatchString(trimmed):
			// the delimiter row under the header
		case inTable && len(cells) != len(header):
			errs = append(errs, fmt.Errorf("%s:%d: %d cells, want %d as the header has", path, i+1, len(cells), len(header)))
		case inTable:
			out = append(out, Row{path, i + 1, cells})
		case slices.Equal(cells, header):
			inTable = true
		}
	}
	if !inTable {
		return nil, fmt.Errorf("%s has no table with the header | %s |", path, strings.Join(header, " | "))
	}
	return out, errors.Join(errs...)
}

// cellsOf splits a table line into its cells, trimmed; `\|` is a pipe
// inside a cell.
func cellsOf(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// CodeSpans are what a cell holds in backticks, in order: the names a row
// is about.
func CodeSpans(cell string) []string {
	var out []string
	for _, m := range code.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}
