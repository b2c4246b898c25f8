package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/testing/dynamotest"
	"github.com/quireapi/quire/internal/testing/memstore"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestSameAccesses: every case of the suite makes in memory the accesses
// it sends to DynamoDB Local (what dynamo.Enforce lets through: each
// action on each table, and each Query of an index), so that a function's
// stores held to its grants in memory (memstore.DB.As) refuse what
// DynamoDB would refuse them.
func TestSameAccesses(t *testing.T) {
	endpoint := dynamotest.Endpoint(t) // skip the whole test, not each case, without DynamoDB
	everything := routes.Group{Name: "everything"}
	for _, table := range dynamo.Tables() {
		everything.Grants = append(everything.Grants, routes.Grant{Table: table.Name, QueryIndexes: true, Actions: []string{
			"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
			"dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:Query", "dynamodb:Scan",
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var sent, made accesses
			_, names := dynamotest.New(t)
			db, err := dynamo.NewClient(dynamo.Config{Endpoint: endpoint, Tables: names}, dynamo.Enforce(everything, names, sent.add))
			if err != nil {
				t.Fatal(err)
			}
			c.test(t, DynamoDB(db, names))
			c.test(t, Memory(memstore.New(0).As(everything, made.add)))
			if diff := cmp.Diff(sent.list(), made.list()); diff != "" {
				t.Errorf("accesses (-DynamoDB +memory):\n%s", diff)
			}
		})
	}
}

// accesses are the distinct accesses a store made: the action and the
// table, or "<table>/index" for an index of it.
type accesses struct {
	sync.Mutex
	seen map[string]bool
}

func (s *accesses) add(a dynamo.Access) {
	s.Lock()
	defer s.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	on := a.Table
	if a.Index != "" {
		on += "/index"
	}
	s.seen[fmt.Sprint(a.Action, " ", on)] = true
}

func (s *accesses) list() []string {
	s.Lock()
	defer s.Unlock()
	var out []string
	for a := range s.seen {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}
