package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quireapi/quire/internal/dynamo"
	"github.com/quireapi/quire/internal/routes"
)

// dynamoActions are the actions on items, tables and indexes that IAM
// tells apart for a function's calls.
var dynamoActions = []string{
	"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
	"dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:Query", "dynamodb:Scan",
}

// TestRolesAreTheGrants: the IAM statements of each resource group's
// function, as synthesized, allow exactly what routes.Group.Allows allows,
// which dynamo.Enforce holds the function to outside AWS: every action on
// every table and every index of it. An index is granted Query alone.
func TestRolesAreTheGrants(t *testing.T) {
	needsNode(t)
	_, res := template(t)
	for _, g := range routes.Groups() {
		fn, ok := res[exportName(g.Name)+"Function"]
		if !ok {
			t.Errorf("no function of the group %s", g.Name)
			continue
		}
		allowed := map[string]bool{} // "action table[/index/name]", as the role's statements allow
		for _, p := range ofType(res, "AWS::IAM::Policy") {
			if !slices.ContainsFunc(asList(p.Properties["Roles"]), func(r any) bool { return ref(r) == ref(fn.Properties["Role"]) }) {
				continue
			}
			for _, st := range asList(p.Properties["PolicyDocument"].(map[string]any)["Statement"]) {
				st := st.(map[string]any)
				for _, a := range asList(st["Action"]) {
					for _, r := range asList(st["Resource"]) {
						if on, ok := tableResource(res, r); ok && st["Effect"] == "Allow" {
							allowed[fmt.Sprint(a, " ", on)] = true
						}
					}
				}
			}
		}
		for _, table := range dynamo.Tables() {
			for _, action := range dynamoActions {
				if got, want := allowed[action+" "+table.Name], g.Allows(action, table.Name, false); got != want {
					t.Errorf("%s's role allows %s on the table %s: %v; its grants: %v", g.Name, action, table.Name, got, want)
				}
				for _, ix := range table.Indexes {
					on := table.Name + "/index/" + ix.Name
					if got, want := allowed[action+" "+on], g.Allows(action, table.Name, true); got != want {
						t.Errorf("%s's role allows %s on the index %s: %v; its grants: %v", g.Name, action, on, got, want)
					}
				}
			}
		}
	}
}

// tableResource reads a statement's resource that is a table's ARN, or an
// index's (its table's ARN joined with /index/<name>), as the table's
// logical name, with /index/<name> for an index.
func tableResource(res map[string]resource, r any) (string, bool) {
	m, _ := r.(map[string]any) // "*" is no table's
	suffix := ""
	if join, ok := m["Fn::Join"].([]any); ok && len(join) == 2 {
		parts := asList(join[1])
		if len(parts) != 2 {
			return "", false
		}
		r, suffix = parts[0], fmt.Sprint(parts[1])
	}
	id := ref(r)
	if res[id].Type != "AWS::DynamoDB::Table" || suffix != "" && !strings.HasPrefix(suffix, "/index/") {
		return "", false
	}
	for _, t := range dynamo.Tables() {
		if strings.HasPrefix(id, exportName(t.Name)+"Table") {
			return t.Name + suffix, true
		}
	}
	return "", false
}
