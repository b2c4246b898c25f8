package quire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Money is an amount in cents. JSON carries it as a decimal number with two
// fraction digits (12.50); no float arithmetic ever touches it.
type Money int64

// MaxMoney bounds every amount so that sums of a few amounts cannot overflow
// and every amount survives a float64 round trip in a client: 10^13 cents.
const MaxMoney Money = 10_000_000_000_000

// String formats m as a decimal with two fraction digits: "-1.05".
func (m Money) String() string {
	sign, v := "", int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalJSON writes m as a JSON number with two fraction digits.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a JSON number with at most two fraction digits. It
// rejects strings, exponents, more digits and amounts beyond MaxMoney with
// a *json.UnmarshalTypeError, as encoding/json does a value of the wrong
// type: the decoder adds the field's name to it, so the client is told
// which field it is (ErrMoney says what it must be).
func (m *Money) UnmarshalJSON(b []byte) error {
	v, err := ParseMoney(string(b))
	if err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Money]()}
	}
	*m = v
	return nil
}

// ErrMoney is wrapped by every error ParseMoney returns, and says what an
// amount must be. Its bounds are MaxMoney's, written out (TestErrMoney
// holds them to it) so that no function formats them as it starts.
var ErrMoney = errors.New("must be a decimal number with at most two fraction digits, from -100000000000.00 to 100000000000.00")

// ParseMoney parses a decimal such as "12", "12.5" or "-0.05" into cents.
func ParseMoney(s string) (Money, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(digits, ".")
	if whole == "" || len(whole) > 1 && whole[0] == '0' || !allDigits(whole) ||
		hasDot && (frac == "" || len(frac) > 2 || !allDigits(frac)) {
		return 0, fmt.Errorf("%q: %w", s, ErrMoney)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	cents, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || Money(cents) > MaxMoney {
		return 0, fmt.Errorf("%q: %w", s, ErrMoney)
	}
	if neg {
		cents = -cents
	}
	return Money(cents), nil
}
