package ddbfault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The answers of DynamoDB to a call that meets a transaction in flight.
const (
	conflictMessage = "Transaction is ongoing for the item."
	conflictReason  = "TransactionConflict"
)

// role is what a call does with its items, as conflicts go.
type role int

const (
	transaction  role = iota + 1 // writes or checks items: TransactWriteItems
	single                       // writes one item: PutItem, UpdateItem, DeleteItem
	transactRead                 // reads items in a transaction: TransactGetItems
)

// roles are the calls a Conflict rule concerns.
var roles = map[string]role{
	"TransactWriteItems": transaction, "PutItem": single, "UpdateItem": single, "DeleteItem": single,
	"TransactGetItems": transactRead,
}

// flights are the items of the calls in flight through the proxy, each
// key (see itemKey) with the number of calls holding it: transactions
// (whose items conflict with any write or transactional read) and single
// writes (whose item conflicts with a transactional read only).
type flights struct {
	transactions map[string]int
	singles      map[string]int
}

// enter applies the first Conflict rule that matches a call, if any, just
// before the call is forwarded: the call's items are checked against those
// in flight, and a conflict is answered as DynamoDB answers it (see
// writeConflict). A call that goes ahead puts its items in flight: a
// transaction for the rule's Delay, before it is forwarded (or, with no
// Delay, until DynamoDB answers it); a single write until DynamoDB answers
// it. The caller calls leave once DynamoDB has answered. answered reports
// that the call was answered here (a conflict, or a client that gave up
// during the Delay) and is not to be forwarded. A call whose items cannot
// be read is forwarded untouched: DynamoDB answers it.
//
// A transaction's items are in flight for the Delay rather than for as
// long as DynamoDB Local takes because DynamoDB Local, which runs one
// transaction at a time, takes far longer than DynamoDB under concurrent
// calls (tens of milliseconds, seconds while its JVM warms up): conflicts
// would then depend on how loaded and how warm it is.
func (p *Proxy) enter(w http.ResponseWriter, r *http.Request, op string, tables []string, body []byte) (leave func(), answered bool) {
	none := func() {}
	ro, ok := roles[op]
	if !ok || !p.emulating(op, tables) {
		return none, false
	}
	keys, err := p.itemKeys(r, op, body)
	if err != nil || len(keys) == 0 {
		return none, false
	}
	clash, hold, ok := p.claim(op, tables, ro, keys)
	if clash != nil {
		writeConflict(w, ro, clash)
		return none, true
	}
	if !ok {
		return none, false
	}
	leave = func() { p.release(ro, keys) }
	if ro != transaction || hold == 0 {
		return leave, false
	}
	select {
	case <-time.After(hold):
		leave()
		return none, false
	case <-r.Context().Done():
		leave()
		return none, true
	}
}

// claim checks the items of a call (their keys, "" for one that cannot be
// told) against those in flight. On a conflict that the matching Conflict
// rule injects, it returns which items clash; otherwise it puts the items
// in flight (ok) and returns the rule's Delay. ok is false when no Conflict
// rule matches any more.
func (p *Proxy) claim(op string, tables []string, ro role, keys []string) (clash []bool, hold time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rl := p.conflictRule(op, tables)
	if rl == nil { // the rules changed meanwhile
		return nil, 0, false
	}
	clash = make([]bool, len(keys))
	clashed := false
	for i, k := range keys {
		clash[i] = k != "" && (p.inFlight.transactions[k] > 0 || ro == transactRead && p.inFlight.singles[k] > 0)
		clashed = clashed || clash[i]
	}
	if clashed && p.take(rl) {
		p.injected[Conflict]++
		return clash, 0, false
	}
	if held := p.inFlight.of(ro); held != nil {
		for _, k := range keys {
			if k != "" {
				held[k]++
			}
		}
	}
	return nil, rl.Delay, true
}

// Held returns how many items transactions hold in flight now, for
// Conflict rules: a test that needs a transaction's items held waits until
// they are.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.inFlight.transactions {
		n += c
	}
	return n
}

// release takes the items of a call that claim put in flight out of it.
func (p *Proxy) release(ro role, keys []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	held := p.inFlight.of(ro)
	if held == nil {
		return
	}
	for _, k := range keys {
		if k == "" {
			continue
		}
		if held[k]--; held[k] <= 0 {
			delete(held, k)
		}
	}
}

// of returns the items in flight of calls of role ro, nil for a role whose
// items no call meets.
func (f flights) of(ro role) map[string]int {
	switch ro {
	case transaction:
		return f.transactions
	case single:
		return f.singles
	}
	return nil
}

// emulating reports whether a Conflict rule matches the call.
func (p *Proxy) emulating(op string, tables []string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conflictRule(op, tables) != nil
}

// conflictRule returns the first Conflict rule that matches the call, or
// nil. The caller holds p.mu.
func (p *Proxy) conflictRule(op string, tables []string) *rule {
	for i := range p.rules {
		if r := &p.rules[i]; r.Fault == Conflict && r.matches(op, tables) {
			return r
		}
	}
	return nil
}

// take reports whether rule r injects the conflict it found, as its
// Probability and Count say, and counts it. The caller holds p.mu.
func (p *Proxy) take(r *rule) bool {
	if r.Count > 0 && r.left == 0 {
		return false
	}
	if r.Probability > 0 && p.rand.Float64() >= r.Probability {
		return false
	}
	if r.Count > 0 {
		r.left--
	}
	return true
}

// writeConflict answers a call that met a transaction in flight: a single
// write with TransactionConflictException, a transaction with
// TransactionCanceledException whose reasons say TransactionConflict for
// the items in clash and None for the others.
func writeConflict(w http.ResponseWriter, ro role, clash []bool) {
	if ro == single {
		writeError(w, http.StatusBadRequest, "TransactionConflictException", conflictMessage, nil)
		return
	}
	reasons := make([]map[string]string, len(clash))
	codes := make([]string, len(clash))
	for i, c := range clash {
		reasons[i], codes[i] = map[string]string{"Code": "None"}, "None"
		if c {
			reasons[i], codes[i] = map[string]string{"Code": conflictReason, "Message": conflictMessage}, conflictReason
		}
	}
	writeError(w, http.StatusBadRequest, "TransactionCanceledException",
		"Transaction cancelled, please refer cancellation reasons for specific reasons ["+strings.Join(codes, ", ")+"]", reasons)
}

// attributes is an item or a key as the request carries it: each
// attribute's value in DynamoDB's JSON ({"S": "a"}).
type attributes map[string]json.RawMessage

// itemTarget is one item of a call: its table and key, or its whole item
// (a Put), whose key attributes the table's key schema names.
type itemTarget struct {
	TableName string
	Key       attributes
	Item      attributes
}

// itemKeys returns the key of each item a call writes or reads, in the
// order of the call's items, "" for an item whose key cannot be told.
func (p *Proxy) itemKeys(r *http.Request, op string, body []byte) ([]string, error) {
	targets, err := parseTargets(op, body)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(targets))
	for i, t := range targets {
		key := t.Key
		if key == nil && t.Item != nil {
			names, err := p.keySchema(r, t.TableName)
			if err != nil {
				continue
			}
			key = attributes{}
			for _, n := range names {
				key[n] = t.Item[n]
			}
		}
		keys[i] = itemKey(t.TableName, key)
	}
	return keys, nil
}

// parseTargets returns the items of a call's body: one for a PutItem,
// UpdateItem or DeleteItem, one per action of a transaction.
func parseTargets(op string, body []byte) ([]itemTarget, error) {
	if !strings.HasPrefix(op, "Transact") {
		var t itemTarget
		if err := json.Unmarshal(body, &t); err != nil {
			return nil, err
		}
		return []itemTarget{t}, nil
	}
	var req struct{ TransactItems []map[string]itemTarget }
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	targets := make([]itemTarget, len(req.TransactItems))
	for i, it := range req.TransactItems {
		for _, t := range it { // one of Put, Update, Delete, ConditionCheck or Get
			targets[i] = t
		}
	}
	return targets, nil
}

// itemKey returns a string that is the same for two keys of one item: the
// table and each key attribute's name, type and value, numbers in a
// canonical form. It is "" for a key it cannot read.
func itemKey(table string, key attributes) string {
	if table == "" || len(key) == 0 {
		return ""
	}
	parts := []string{table}
	for _, name := range slices.Sorted(maps.Keys(key)) {
		var v map[string]string // a key attribute is a string, a number or binary
		if json.Unmarshal(key[name], &v) != nil || len(v) != 1 {
			return ""
		}
		for typ, val := range v {
			if typ == "N" {
				n, ok := new(big.Rat).SetString(val)
				if !ok {
					return ""
				}
				val = n.RatString()
			}
			parts = append(parts, name, typ, val)
		}
	}
	b, _ := json.Marshal(parts) // strings always marshal
	return string(b)
}

// keySchema returns the names of table's key attributes, which it asks
// DynamoDB for (DescribeTable) the first time, with the credentials of r
// (DynamoDB Local takes the account and region from them and checks no
// signature).
func (p *Proxy) keySchema(r *http.Request, table string) ([]string, error) {
	p.mu.Lock()
	names, ok := p.schemas[table]
	p.mu.Unlock()
	if ok {
		return names, nil
	}
	body, _ := json.Marshal(map[string]string{"TableName": table}) // strings always marshal
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.upstream+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", target+"DescribeTable")
	for _, h := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ddbfault: describe %s: %w", table, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("ddbfault: describe %s: %w", table, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ddbfault: describe %s: %s %s", table, resp.Status, b)
	}
	var out struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Table.KeySchema) == 0 {
		return nil, fmt.Errorf("ddbfault: describe %s: no key schema in %s", table, b)
	}
	for _, k := range out.Table.KeySchema {
		names = append(names, k.AttributeName)
	}
	p.mu.Lock()
	p.schemas[table] = names
	p.mu.Unlock()
	return names, nil
}
