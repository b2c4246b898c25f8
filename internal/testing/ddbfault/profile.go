package ddbfault

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Profiles are named fault profiles: what `make run FAULTS=<name>` and the
// soak benchmark inject.
var Profiles = map[string]string{
	// flaky is a bad day: a few percent of calls throttled, failed, slow
	// or answered into a dropped connection.
	"flaky": "throttle 2%, throughput 1%, internal 1%, transaction 2% TransactWriteItems, " +
		"delay 300ms 2%, reset 1%, lost 2% TransactWriteItems, lost 1%",
	// throttled is a table past its on-demand peak: a third of all calls.
	"throttled": "throttle 20%, throughput 15%",
	// slow is DynamoDB answering reads after 3 s.
	"slow": "delay 3s 50% GetItem, delay 3s 50% Query",
	// contended is DynamoDB under concurrent writers: transactions take
	// 20 ms, and what touches their items meanwhile conflicts.
	"contended": "conflict 20ms",
}

const maxRules = 32

// ErrProfile marks a fault profile that does not parse.
var ErrProfile = errors.New("ddbfault: bad profile")

// ParseProfile reads a fault profile: a name from Profiles, or rules
// separated by commas, each "<fault> [<delay>] [<n>%|x<n>] [<Operation>]
// [<table>]", such as "throttle 5%", "delay 2s 10% GetItem users", "lost x1
// TransactWriteItems" or "conflict 20ms" (transactions held 20 ms). A rule
// without a probability or count faults every call it matches. It returns
// an error wrapping ErrProfile that names what is wrong.
func ParseProfile(s string) ([]Rule, error) {
	if named, ok := Profiles[strings.TrimSpace(s)]; ok {
		s = named
	}
	var rules []Rule
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		if len(rules) == maxRules {
			return nil, fmt.Errorf("%w: more than %d rules", ErrProfile, maxRules)
		}
		r, err := parseRule(part)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrProfile, strings.TrimSpace(part), err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseRule(s string) (Rule, error) {
	fields := strings.Fields(s)
	r := Rule{Fault: Kind(fields[0])}
	if !slices.Contains(Kinds, r.Fault) {
		return Rule{}, fmt.Errorf("unknown fault %q (want one of %v)", fields[0], Kinds)
	}
	for _, f := range fields[1:] {
		var err error
		switch {
		case strings.HasSuffix(f, "%"):
			var pct float64
			pct, err = strconv.ParseFloat(strings.TrimSuffix(f, "%"), 64)
			if err != nil || !(pct > 0 && pct <= 100) {
				return Rule{}, fmt.Errorf("probability %q: want more than 0%% and at most 100%%", f)
			}
			r.Probability = pct / 100
		case strings.HasPrefix(f, "x") && len(f) > 1 && unicode.IsDigit(rune(f[1])):
			r.Count, err = strconv.Atoi(f[1:])
			if err != nil || r.Count < 1 || r.Count > 1_000_000 {
				return Rule{}, fmt.Errorf("count %q: want x1 to x1000000", f)
			}
		case unicode.IsDigit(rune(f[0])):
			r.Delay, err = time.ParseDuration(f)
			if err != nil || r.Delay <= 0 || r.Delay > time.Hour {
				return Rule{}, fmt.Errorf("delay %q: want a duration up to 1h, such as 2s", f)
			}
		case unicode.IsUpper(rune(f[0])):
			r.Operation = f
		default:
			r.Table = f
		}
	}
	if r.Fault == Delay && r.Delay == 0 {
		return Rule{}, fmt.Errorf("a delay needs its duration, such as \"delay 2s\"")
	}
	if r.Fault != Delay && r.Fault != Conflict && r.Delay != 0 {
		return Rule{}, fmt.Errorf("only a delay or a conflict takes a duration")
	}
	return r, nil
}
