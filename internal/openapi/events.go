package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/config"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

// event documents one type of event: what it says, the resource path its
// subject is under, its data's schema, and an example of its data.
type event struct {
	summary, when, subject string
	data, example          schema
}

// events documents every type of event (quire.EventTypes), by type, its
// first version. The events are not versioned with the API: every
// version's document describes the same ones, in its webhooks, and a type
// has versions of its own (laterVersions).
func events() map[string]event {
	id := ref("ID")
	anyMoney := money(0, quire.MaxMoney)
	statuses := []any{string(catalog.StatusAvailable), string(catalog.StatusDiscontinued), string(catalog.StatusArchived)}
	listed := schema{
		"product_id": id, "name": schema{"type": "string", "minLength": 1, "maxLength": catalog.MaxNameLen},
		"price": money(1, catalog.MaxPrice), "status": schema{"type": "string", "enum": statuses}, "author_id": id,
	}
	user := open(schema{"user_id": id})
	// changed names the fields that changed, each once: one or more of
	// fields.
	changed := func(description string, fields ...any) schema {
		return schema{"type": "array", "minItems": 1, "maxItems": len(fields), "uniqueItems": true, "description": description,
			"items": schema{"type": "string", "enum": fields}}
	}
	kindred := schema{"product_id": 4, "name": "Kindred", "price": amount(999), "status": "AVAILABLE", "author_id": 4}
	return map[string]event{
		quire.EventOrderPlaced: {summary: "An order was placed", when: "a payment committed: POST /pay or POST /products/{id}/buy",
			subject: "orders", data: open(schema{
				"order_id": id, "user_id": id, "total": anyMoney,
				"items": with(arrayOf(open(schema{
					"product_id": id, "name": str(catalog.MaxNameLen), "price": money(1, catalog.MaxPrice),
					"quantity": integer(1, carts.MaxQuantity), "subtotal": anyMoney,
				}), carts.MaxItems), schema{"minItems": 1}),
			}), example: schema{"order_id": 246129464436429, "user_id": 2, "total": amount(3297), "items": []any{
				schema{"product_id": 1, "name": "Frankenstein", "price": amount(1299), "quantity": 1, "subtotal": amount(1299)},
				schema{"product_id": 3, "name": "Pride and Prejudice", "price": amount(999), "quantity": 2, "subtotal": amount(1998)},
			}}},
		quire.EventUserCreated: {summary: "A customer signed up", when: "POST /users committed", subject: "users", data: user,
			example: schema{"user_id": 7}},
		quire.EventUserFunded: {summary: "Money was deposited into an account", when: "a deposit committed: POST /users/{id}/deposit",
			subject: "users", data: open(schema{
				"user_id": id, "amount": money(users.MinDeposit, users.MaxDeposit),
				"balance": with(money(0, users.MaxBalance), schema{"description": "The balance after the deposit. " + moneyWords}),
			}), example: schema{"user_id": 2, "amount": amount(1000), "balance": amount(6000)}},
		quire.EventUserChanged: {summary: "A user's fields changed", when: "PUT /users/{id} or PUT /users/{id}/profile changed a field " +
			"other than the status", subject: "users", data: open(schema{"user_id": id, "changed": changed(
			"The names of the fields that changed, never their values",
			"email", "first_name", "last_name", "role", "password", "bio", "location", "website", "newsletter",
		)}), example: schema{"user_id": 2, "changed": []any{"first_name", "last_name"}}},
		quire.EventUserClosed: {summary: "An account was closed", when: "POST /users/{id}/close, or an admin's PUT /users/{id} " +
			"that closed it", subject: "users", data: user, example: schema{"user_id": 3}},
		quire.EventUserReopened: {summary: "A closed account was reopened", when: "an admin's PUT /users/{id} that reopened it",
			subject: "users", data: user, example: schema{"user_id": 3}},
		quire.EventUserDeleted: {summary: "A user was deleted", when: "DELETE /users/{id}", subject: "users", data: open(schema{
			"user_id": id,
			"balance": with(money(0, users.MaxBalance), schema{"description": "The balance the account held: zero when its owner " +
				"deleted it; what the shop refunds outside Quire when an admin deleted a funded account. " + moneyWords}),
		}), example: schema{"user_id": 3, "balance": amount(0)}},
		quire.EventAuthorCreated: {summary: "An author was added to the catalog", when: "POST /admin/authors",
			subject: "authors", data: open(schema{
				"author_id": id, "name": schema{"type": "string", "minLength": 1, "maxLength": catalog.MaxNameLen},
			}), example: schema{"author_id": 4, "name": "Octavia Butler"}},
		quire.EventProductCreated: {summary: "A product was added to the catalog", when: "POST /admin/products",
			subject: "products", data: open(listed), example: kindred},
		quire.EventProductChanged: {summary: "A product changed", when: "PUT /admin/products/{id} changed a field; when it archived " +
			"the product, product.archived is published too, and this names the fields the archive changed besides the status",
			subject: "products", data: open(with(listed, schema{"changed": changed("The fields that changed",
				"name", "price", "status", "author_id")})), example: with(kindred, schema{"price": amount(1050), "changed": []any{"price"}})},
		quire.EventProductArchived: {summary: "A product was archived", when: "PUT /admin/products/{id} archived it",
			subject: "products", data: open(schema{"product_id": id}), example: schema{"product_id": 4}},
		quire.EventConfigChanged: {summary: "The configuration document was replaced", when: "PUT /admin/config stored a new document",
			subject: "config", data: open(schema{
				"etag": schema{"type": "string", "maxLength": tagLen(false), "pattern": `^"[A-Za-z0-9_-]{22}-v[0-9]+"$`,
					"description": "The new document's ETag, as GET /config answers it uncompressed: what If-None-Match takes"},
				"size": with(integer(1, config.MaxBytes), schema{"description": "The new document's size, in bytes"}),
			}), example: schema{"etag": `"nqv-L_piFITDQ0R0q-ywGg-v1"`, "size": 16}},
	}
}

// publishers are the write routes that publish typ, as the route table
// says (routes.Route.Events).
func publishers(typ string) []string {
	var out []string
	for _, r := range routes.All() {
		if key := r.Resource().Key(); slices.Contains(r.Events, typ) && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}

// subjectPattern is the pattern of the subjects of events about the
// resources under path: one of them ("/orders/42"), or the configuration
// document, a resource of its own ("/config").
func subjectPattern(path string) string {
	if path == "config" {
		return "^/config$"
	}
	return fmt.Sprintf("^/%s/[1-9][0-9]*$", path)
}

// open is an object schema of these properties, all required but the
// optional ones, that may have more: an event a consumer reads may carry
// new members, which it ignores.
func open(props schema, optional ...string) schema {
	out := object(props, optional...)
	delete(out, "additionalProperties")
	return out
}

// eventSchema names the component schema of the event typ:
// "order.placed" is OrderPlaced.
func eventSchema(typ string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(typ, func(c rune) bool { return c == '.' || c == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// laterVersions holds, by type, each version of its events after the
// first (its data's schema and an example), oldest first. A breaking
// change to an event's data is a new version, which the domain publishes
// beside the old one (quire.Event.Version) until the old one's sunset
// (retiredEvents). None has come yet.
var laterVersions = map[string][]event{}

// retiredEvents holds the versions of events being retired, by their
// dataschema (quire.EventSchema): their webhooks are deprecated, with
// their dates. From Sunset on, the domain no longer publishes them, and
// their webhooks leave the documents, which the guard then lets pass.
var retiredEvents = map[string]routes.Retirement{}

// webhooks returns the document's webhooks, each version of each event as
// the POST its receiver takes, and adds their schemas to schemas. Version
// 1 of a type is the webhook named after it ("order.placed"), a later one
// after it and its version ("order.placed.v2").
func webhooks(schemas schema) schema {
	out := schema{}
	all := events()
	for _, typ := range quire.EventTypes {
		e := all[typ]
		for i, v := range append([]event{e}, laterVersions[typ]...) {
			hook, version := typ, i+1
			if version > 1 {
				hook = fmt.Sprintf("%s.v%d", typ, version)
			}
			name, dataschema := eventSchema(hook), quire.EventSchema(typ, version)
			schemas[name+"Data"] = v.data
			schemas[name] = open(schema{
				"specversion": with(constant(quire.EventSpecVersion), schema{
					"description": "The version of CloudEvents the event follows (structured JSON)"}),
				"id":     ref("EventID"),
				"source": ref("EventSource"),
				"type":   constant(typ),
				"subject": schema{"type": "string", "maxLength": 64, "pattern": subjectPattern(e.subject),
					"description": "The path of the resource the change happened to"},
				"time": schema{"type": "string", "format": "date-time", "maxLength": len(time.Time{}.Format(quire.EventTimeFormat)),
					"pattern":     `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`,
					"description": "When the change was decided, in UTC to the millisecond, always with three fractional digits"},
				"datacontenttype": constant(quire.EventContentType),
				"dataschema": with(constant(dataschema), schema{
					"description": "The version of the type that data follows: a breaking change to it comes as a new version"}),
				"data": ref(name + "Data"),
			})
			post := schema{
				"operationId": "event" + name,
				"summary":     e.summary,
				"description": "Published by " + strings.Join(publishers(typ), ", ") + ": once " + e.when + ", if and only if the change committed, at least once: a " +
					"receiver deduplicates by id. Deployed, it is the detail of an EventBridge event on the stage's bus, " +
					"whose source is the event's and whose detail-type is its type; under make run, a POST to EVENTS_URL.",
				"tags":     []any{"events"},
				"security": []any{},
				"requestBody": schema{"required": true, "content": schema{"application/json": schema{"schema": ref(name),
					"example": eventExample(typ, version, e.subject, v.example)}}},
				"responses": schema{
					"2XX": schema{"description": "The receiver took the event"},
					"default": schema{"description": "The receiver did not take it: it is sent again, after a pause " +
						"that doubles each time"},
				},
			}
			if r, ok := retiredEvents[dataschema]; ok {
				post["deprecated"] = true
				post["x-sunset"] = r.Sunset.UTC().Format(time.DateOnly)
				post["description"] = fmt.Sprintf("Version %d of %s is deprecated from %s and published until %s, beside "+
					"the versions after it (%s). ", version, typ, r.Deprecated.UTC().Format(time.DateOnly),
					r.Sunset.UTC().Format(time.DateOnly), r.Changelog) + post["description"].(string)
			}
			out[hook] = schema{"post": post}
		}
	}
	schemas["EventID"] = schema{"type": "string", "maxLength": quire.HashLen, "pattern": "^[A-Za-z0-9_-]{22}$",
		"description": "The event's own id, the same at every delivery of it"}
	schemas["EventSource"] = schema{"type": "string", "maxLength": 138, "pattern": "^urn:quire:[A-Za-z][A-Za-z0-9-]*$",
		"description": "The stack that published the event, urn:quire:<stack>: urn:quire:Quire-prod for the stage prod, " +
			"urn:quire:Quire for the stage without a name and make run"}
	return out
}

// eventExample is an example of version version of the events of type
// typ about the resources under path, carrying data, as the stage prod
// publishes it.
func eventExample(typ string, version int, path string, data schema) json.RawMessage {
	subject := "/config"
	if path != "config" {
		subject = fmt.Sprintf("/%s/%v", path, data[strings.TrimSuffix(path, "s")+"_id"])
	}
	ev := quire.NewEvent(typ, subject, "example", time.Date(2026, 11, 27, 11, 43, 21, 278e6, time.UTC), data)
	if version > 1 {
		ev = ev.Version(version, data)
	}
	ev.Source = quire.EventSource(quire.Stack + "-prod")
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // a bug: the examples are Quire's own values
	}
	return b
}

// eventsTag is the tag of the webhooks.
var eventsTag = schema{"name": "events", "description": "What happened in the shop, published as it commits: " +
	"the webhooks. Every version's document describes the same events."}
