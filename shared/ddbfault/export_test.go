package ddbfault

// TransactionsInFlight returns how many items the transactions in flight
// hold, for tests that wait until one is.
func (p *Proxy) TransactionsInFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.inFlight.transactions {
		n += c
	}
	return n
}
