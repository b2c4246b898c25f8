package users

import (
	"testing"

	"github.com/quireapi/quire/internal/quire"
)

// A deposit's amount is required and from MinDeposit to MaxDeposit, with no
// store: the refusal names the field and its bounds.
func TestDepositAmount(t *testing.T) {
	money := func(m quire.Money) *quire.Money { return &m }
	for _, tc := range []struct {
		amount *quire.Money
		detail string
	}{
		{amount: money(MinDeposit)},
		{amount: money(MaxDeposit)},
		{amount: nil, detail: "is required"},
		{amount: money(0), detail: "must be from 0.01 to 10000.00"},
		{amount: money(MaxDeposit + 1), detail: "must be from 0.01 to 10000.00"},
		{amount: money(-5_00), detail: "must be from 0.01 to 10000.00"},
	} {
		got, err := Deposit{Amount: tc.amount}.Valid()
		if tc.detail == "" {
			if err != nil || got != *tc.amount {
				t.Errorf("check(%v) = %v, %v; want the amount", *tc.amount, got, err)
			}
			continue
		}
		e, _ := err.(*quire.Error)
		if e == nil || e.Code != quire.EINVALID || len(e.Fields) != 1 || e.Fields[0] != (quire.FieldError{Pointer: "/amount", Detail: tc.detail}) {
			t.Errorf("check(%v) = %v, want /amount %q", tc.amount, err, tc.detail)
		}
	}
}
