package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/routes"
)

// DynamoDB's limits per partition, and the rates the key-heat report is at
// and aims for.
const (
	partitionReads  = 3000 // read units per second
	partitionWrites = 1000 // write units per second
	reportRate      = 10_000
	targetRate      = 50_000
)

// load is capacity units, per request or per second.
type load struct{ read, write float64 }

func (l load) add(o load, k float64) load { return load{l.read + k*o.read, l.write + k*o.write} }

// use is the larger share of a partition's limits that l takes per second.
func (l load) use() float64 { return max(l.read/partitionReads, l.write/partitionWrites) }

// classValue is a class and, for a class of one value or a listed one, the
// value.
type classValue struct {
	keyClass
	value string
}

// requestLoads sums one request's touches by class and, where the values of
// a class take their loads apart (one value, listed), by value. A read by
// key of a table after a Query of one of its indexes' one-value partitions,
// in the same request, reads what that partition lists (see listed).
func requestLoads(calls []call) map[classValue]load {
	calls = slices.Clone(calls)
	slices.SortStableFunc(calls, func(a, b call) int { return a.start.Compare(b.start) })
	listing := map[string]bool{} // by table
	out := map[classValue]load{}
	for _, c := range calls {
		for _, t := range c.touches {
			k := classValue{keyClass: classify(t, listing[t.table] && c.op != "Query")}
			if k.spread == shared || k.spread == listed {
				k.value = t.value
			}
			out[k] = out[k].add(load{t.read, t.write}, 1)
		}
		for _, t := range c.touches {
			if c.op == "Query" && t.index != "" && classOf(t).spread == shared {
				listing[t.table] = true
			}
		}
	}
	return out
}

// classLoads sums one request's loads by class.
func classLoads(calls []call) map[keyClass]load {
	out := map[keyClass]load{}
	for k, l := range requestLoads(calls) {
		out[k.keyClass] = out[k.keyClass].add(l, 1)
	}
	return out
}

// weighted is a mix entry with its row and its share of the requests.
type weighted struct {
	mixEntry
	row   requestRow
	share float64
}

// weigh finds every mix entry's row and share, and fails when a route has
// no entry.
func weigh(rows []requestRow) ([]weighted, error) {
	total := 0.0
	for _, e := range trafficMix {
		total += e.weight
	}
	var out []weighted
	has := map[string]bool{}
	for _, e := range trafficMix {
		r, err := mixCase(rows, e)
		if err != nil {
			return nil, err
		}
		out = append(out, weighted{e, r, e.weight / total})
		has[e.route] = true
	}
	var missing []string
	for _, r := range routes.All() {
		if key := r.Resource().Key(); !has[key] {
			missing, has[key] = append(missing, key), true
		}
	}
	if missing != nil {
		return nil, fmt.Errorf("routes without a traffic mix entry: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// hotKey is the load on the hottest value of a partition key class.
type hotKey struct {
	table, index, name string
	spreads            []spread // what loads it
	load               load     // per second
}

// hottest is the load per second on each class's hottest value for the mix
// at rate requests per second: the load of its most loaded value of one
// (or listed), and the share of its spread load that value takes (the
// bestseller taken to be listed too: a featured book on the first page).
func hottest(mix []weighted, rate float64) []hotKey {
	type group struct{ table, index, name string }
	spreadLoad := map[group]load{}
	valueLoad := map[group]map[string]load{}
	spreads := map[group][]spread{}
	for _, w := range mix {
		for k, l := range requestLoads(w.row.steady) {
			g := group{k.table, k.index, k.name}
			if !slices.Contains(spreads[g], k.spread) {
				spreads[g] = append(spreads[g], k.spread)
			}
			if k.spread == shared || k.spread == listed {
				if valueLoad[g] == nil {
					valueLoad[g] = map[string]load{}
				}
				valueLoad[g][k.value] = valueLoad[g][k.value].add(l, rate*w.share)
				continue
			}
			spreadLoad[g] = spreadLoad[g].add(l, rate*w.share*k.spread.share())
		}
	}
	var out []hotKey
	for g, ss := range spreads {
		var top load
		for _, l := range valueLoad[g] {
			if l.use() > top.use() {
				top = l
			}
		}
		slices.Sort(ss)
		out = append(out, hotKey{g.table, g.index, g.name, ss, top.add(spreadLoad[g], 1)})
	}
	slices.SortFunc(out, func(a, b hotKey) int { return strings.Compare(a.name, b.name) })
	return out
}

// heatRow is the hottest class of one table or index.
type heatRow struct {
	table, index string
	hot          hotKey // none: name ""
	ceiling      float64
}

// ceiling is the request rate at which l, a load at rate, reaches a
// partition's limits: +Inf for no load.
func ceiling(l load, rate float64) float64 {
	if l.use() == 0 {
		return math.Inf(1)
	}
	return rate / l.use()
}

// heatRows returns a row per table and per index, in schema order, with
// its hottest class at reportRate.
func heatRows(mix []weighted) []heatRow {
	hot := hottest(mix, reportRate)
	var out []heatRow
	for _, t := range dynamo.Tables() {
		for _, index := range append([]string{""}, indexNames(t)...) {
			row := heatRow{table: t.Name, index: index, ceiling: math.Inf(1)}
			for _, h := range hot {
				if h.table != t.Name || h.index != index || h.load.use() == 0 {
					continue
				}
				if c := ceiling(h.load, reportRate); c < row.ceiling {
					row.hot, row.ceiling = h, c
				}
			}
			out = append(out, row)
		}
	}
	return out
}

func indexNames(t dynamo.Table) []string {
	var out []string
	for _, ix := range t.Indexes {
		out = append(out, ix.Name)
	}
	return out
}

func printHeat(w io.Writer, mix []weighted) {
	fmt.Fprintf(w, "\n## The traffic mix and key heat\n\nThe traffic mix is a bookshop's with 1,000,000 users at its peak, %s of them active. "+
		"The table gives what each of its requests reads and writes, by partition key class, in capacity units by "+
		"DynamoDB's rules. R is read and W write. An index is written table/index. Listed are the items a one-value "+
		"index partition lists, read after its Query. A GET is shown as it runs again, on the caches its first run "+
		"filled, as on a warm instance:\n\n",
		thousands(activeUsers))
	fmt.Fprintln(w, "| route | request | share | at 10,000 requests/s | partitions per request |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|")
	for _, m := range mix {
		fmt.Fprintf(w, "| `%s` | %s | %.2f%% | %s/s | %s |\n", m.route, m.name, 100*m.share, decimal(reportRate*m.share),
			touched(classLoads(m.row.steady)))
	}
	fmt.Fprintf(w, "\nKey heat at %s requests/s of the mix. For each table and index, the table gives the partition key class whose "+
		"hottest value is nearest DynamoDB's limits per partition: %s read and %s write units a second. It gives that "+
		"value's load, and the rate of the mix at which it reaches them. A per-user key spreads over the %s active "+
		"users; a client that sends more heats its own keys only. Of a book's or an author's keys, the bestseller takes "+
		"%.0f%%, and is taken to be listed too. A key of one value, or a listed item, takes every such request:\n\n",
		thousands(reportRate), thousands(partitionReads), thousands(partitionWrites), thousands(activeUsers),
		100*hotItemShare)
	fmt.Fprintln(w, "| table | index | hottest key | spread | read units/s | write units/s | limits at (requests/s) |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|")
	first := heatRow{ceiling: math.Inf(1)}
	for _, r := range heatRows(mix) {
		index := r.index
		if index == "" {
			index = "(table)"
		}
		if r.hot.name == "" {
			fmt.Fprintf(w, "| %s | %s | none | | 0 | 0 | |\n", r.table, index)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | `%s` | %s | %s | %s | %s |\n", r.table, index, r.hot.name, spreads(r.hot.spreads),
			decimal(r.hot.load.read), decimal(r.hot.load.write), rate(r.ceiling))
		if r.ceiling < first.ceiling {
			first = r
		}
	}
	if math.IsInf(first.ceiling, 1) {
		fmt.Fprintln(w, "\nNo partition has any load.")
		return
	}
	what, limit := "reads", partitionReads
	if first.hot.load.write/partitionWrites > first.hot.load.read/partitionReads {
		what, limit = "writes", partitionWrites
	}
	where := first.table
	if first.index != "" {
		where += " index " + first.index
	}
	fmt.Fprintf(w, "\nFirst to limit: %s, `%s` (%s): its %s reach %s units/s at %s requests/s of the mix. "+
		"Target: %s requests/s with no shared key limiting %s\n", where, first.hot.name, spreads(first.hot.spreads),
		what, thousands(limit), rate(first.ceiling), thousands(targetRate), reached(first.ceiling >= targetRate))
}

func reached(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗ below target"
}

func spreads(ss []spread) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.String())
	}
	return strings.Join(out, " and ")
}

// touched lists a request's loads by class, largest first.
func touched(loads map[keyClass]load) string {
	keys := make([]keyClass, 0, len(loads))
	for k := range loads {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b keyClass) int {
		if d := loads[b].read + 3*loads[b].write - loads[a].read - 3*loads[a].write; d != 0 {
			return int(math.Copysign(1, d))
		}
		if c := strings.Compare(a.table+a.index+a.name, b.table+b.index+b.name); c != 0 {
			return c
		}
		return int(a.spread) - int(b.spread)
	})
	var parts []string
	for _, k := range keys {
		where := k.table
		if k.index != "" {
			where += "/" + k.index
		}
		var units []string
		if l := loads[k]; l.read > 0 {
			units = append(units, decimal(l.read)+" R")
		}
		if l := loads[k]; l.write > 0 {
			units = append(units, decimal(l.write)+" W")
		}
		name := "`" + k.name + "`"
		if k.spread == listed {
			name += " (listed)"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", where, name, strings.Join(units, " ")))
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// rate formats a request rate: "over 10,000,000" past that.
func rate(r float64) string {
	if r > 1e7 {
		return "over 10,000,000"
	}
	return thousands(int(math.Round(r/100) * 100))
}

// thousands formats n with a comma between thousands.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// decimal formats a number of units or requests: whole ones with commas,
// small ones with the digits they need.
func decimal(x float64) string {
	switch {
	case x >= 100:
		return thousands(int(math.Round(x)))
	case x >= 1:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", x), "0"), ".")
	case x == 0:
		return "0"
	case x >= 0.001:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", x), "0"), ".")
	}
	return fmt.Sprintf("%.2g", x)
}
