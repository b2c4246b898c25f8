package openapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/quireapi/quire/internal/carts"
	"github.com/quireapi/quire/internal/catalog"
	"github.com/quireapi/quire/internal/httpapi"
	"github.com/quireapi/quire/internal/idempotency"
	"github.com/quireapi/quire/internal/login"
	"github.com/quireapi/quire/internal/password"
	"github.com/quireapi/quire/internal/quire"
	"github.com/quireapi/quire/internal/rest"
	"github.com/quireapi/quire/internal/routes"
	"github.com/quireapi/quire/internal/users"
)

func parameters() schema {
	q := func(name, description string, s schema) schema {
		return schema{"name": name, "in": "query", "required": false, "description": description, "schema": s}
	}
	key := func(name string) schema {
		return schema{
			"name": name, "in": "header", "required": false,
			"description": fmt.Sprintf("Makes the request safe to retry: 1 to %d printable ASCII characters, kept for %d hours "+
				"(unless IDEMPOTENCY_TTL says otherwise) in the caller's scope. The same key with the same request replays "+
				"the first answer; with another, 422. Idempotency-Key and X-Idempotency-Key mean the same; both with "+
				"different values are 400.", rest.MaxKeyLen, int(idempotency.DefaultTTL.Hours())),
			"schema": schema{"type": "string", "minLength": 1, "maxLength": rest.MaxKeyLen, "pattern": "^[\\x20-\\x7e]+$"},
		}
	}
	h := func(name, description string) schema {
		return schema{"name": name, "in": "header", "required": false, "description": description,
			"schema": schema{"type": "string", "maxLength": rest.MaxHeaderLen}}
	}
	tags := func(name, description string) schema {
		return with(h(name, description), schema{"schema": schema{"type": "string", "maxLength": rest.MaxHeaderLen, "pattern": entityTags}})
	}
	return schema{
		"ifMatch": tags("If-Match", "`*` or a list"+` of entity tags. On a GET, the answer is 412 unless the representation's ETag `+
			`is one of them (strong comparison). On a PUT or DELETE, the write happens only when the resource exists (`+"`*`"+`) or `+
			`its current state is one of them: the ETag of any of its representations, in any version or encoding. `+
			`Otherwise 412, a problem of type https://quire.dev/problems/precondition.`),
		"ifNoneMatch": tags("If-None-Match", "`*` or a list"+` of entity tags. On a GET, the answer is 304 Not Modified, without a body, `+
			`when the representation's ETag is one of them (weak comparison). On a PUT or DELETE, `+"`*`"+` writes only when the `+
			`resource does not exist yet, a list only when its current state is none of them; otherwise 412, a problem `+
			`of type https://quire.dev/problems/precondition.`),
		"ifMatchPurchase": tags("If-Match", `The ETag of what the buyer saw, so that they pay exactly that: the product's `+
			`(GET /products/{id}) to buy one book, GET /cart's to pay the cart (its books' prices and status are part of it), `+
			`a strong tag of any API version. When what is bought changed since, the answer is 412, a problem of type `+
			`https://quire.dev/problems/precondition, and nothing is paid. Without it, the prices the request reads are charged (a function's catalog cache may be up to a second old).`),
		"acceptEncoding":         h("Accept-Encoding", "gzip (or *) with a quality above 0 gets the body gzip-compressed, with Content-Encoding: gzip"),
		"idempotencyKey":         key("Idempotency-Key"),
		"idempotencyKeyRequired": with(key("Idempotency-Key"), schema{"required": true}),
		"xIdempotencyKey":        key("X-Idempotency-Key"),
		"limit":                  q("limit", "Items per page", with(integer(1, rest.MaxLimit), schema{"default": rest.DefaultLimit})),
		"cursor": q("cursor", "Where the page starts: from the next link of the previous page (another is 400)",
			schema{"type": "string", "maxLength": rest.MaxCursorLen, "pattern": "^[A-Za-z0-9_-]+$"}),
		"role":  q("role", "Only active users with this role", schema{"type": "string", "enum": []any{"customer", "admin"}}),
		"embed": q("embed", "Add each user's profile", schema{"type": "string", "enum": []any{"profile"}}),
	}
}

// object is a closed object schema: these properties, all required but
// the optional ones, and nothing else.
func object(props schema, optional ...string) schema {
	var required []string
	for name := range props {
		if !slices.Contains(optional, name) {
			required = append(required, name)
		}
	}
	slices.Sort(required)
	out := schema{"type": "object", "properties": props, "additionalProperties": false}
	if required != nil {
		out["required"] = required
	}
	return out
}

func with(props schema, more schema) schema {
	out := maps.Clone(props)
	maps.Copy(out, more)
	return out
}

// amount is m as a JSON number, written exactly: 12.50.
func amount(m quire.Money) json.Number { return json.Number(m.String()) }

// money is the schema of an amount from min to max: a JSON number with at
// most two decimals (quire.Money).
func money(min, max quire.Money) schema {
	return schema{"type": "number", "format": "double", "minimum": amount(min), "maximum": amount(max),
		"description": moneyWords}
}

// moneyWords says what an amount's schema cannot: JSON Schema's multipleOf
// 0.01 would, but stock validators compute it in binary floating point and
// refuse amounts such as 34.48, and so the server holds requests to it.
const moneyWords = "An exact amount with two decimals, such as 12.50; the server refuses an amount with more (400)"

// text is a string of 1 to max characters, checked as quire.CheckName
// checks names.
func text(max int) schema {
	return schema{"type": "string", "minLength": 1, "maxLength": max, "pattern": quire.TextPattern(false, true),
		"description": fmt.Sprintf("1 to %d characters once surrounding space is trimmed, not all of them space, on one line, with %s", max, textRule)}
}

// textRule says what quire.CheckText refuses in text, which the patterns
// of text fields say too (quire.TextPattern).
const textRule = "no control, format or invisible characters (such as U+202E, U+200B, U+FEFF or U+2028; " + quire.BeyondThePlane + ")"

// adminSets describes a user's role and status in a write.
const adminSets = "Required when an admin writes the user (400 otherwise); ignored when a customer does"

// entityTags is the syntax of If-Match and If-None-Match as rest.ParseTags
// reads them: "*", or a list of entity tags, weak or strong.
const entityTags = `^[ \t,]*(\*|(W/)?"[^"\x00-\x20\x7f]*"([ \t]*,[ \t,]*(W/)?"[^"\x00-\x20\x7f]*")*)[ \t,]*$`

// integer is a whole number from min to max, a 64-bit one (format int64)
// to every client's generator: ids reach 2^53-1.
func integer(min, max int64) schema {
	return schema{"type": "integer", "format": "int64", "minimum": min, "maximum": max}
}

// constant is a string that is always v.
func constant(v string) schema { return schema{"type": "string", "const": v} }

// str is a string of at most n characters.
func str(n int) schema { return schema{"type": "string", "maxLength": n} }

// urlLen bounds a URL or a path the API answers (Location, links): the
// request's own scheme, host and path (its base path, its version
// prefix), of at most rest.MaxHostLen and rest.MaxURLLen characters, each
// escaped in three at most, and a path of the API's own after them.
func urlLen() int { return len("https://") + rest.MaxHostLen + 3*rest.MaxURLLen + longestPath() }

// longestPath is the length of the longest path of a route, without its
// version prefix, its ids at their longest.
func longestPath() int {
	n := 0
	for _, r := range routes.All() {
		p := r.Resource().Path
		for _, name := range pathParameters(r) {
			p = strings.ReplaceAll(p, "{"+name+"}", quire.MaxID.String())
		}
		n = max(n, len(p))
	}
	return n
}

// tagLen is the length of the longest entity tag the API answers
// (rest.Tag), gzip-compressed or not, in the newest version.
func tagLen(gzip bool) int {
	return len(rest.Tag(strings.Repeat("A", quire.HashLen), routes.Versions[len(routes.Versions)-1], gzip))
}

func schemas() schema {
	anyMoney := money(0, quire.MaxMoney)
	price := money(1, catalog.MaxPrice)
	id := ref("ID")
	// A time as encoding/json writes it: RFC 3339 to the nanosecond.
	datetime := schema{"type": "string", "format": "date-time", "maxLength": len(time.RFC3339Nano)}
	seconds := schema{"type": "integer", "format": "int64", "minimum": 0}
	links := arrayOf(ref("Link"), httpapi.MaxLinks)
	path := str(urlLen())
	// A coordinate of a P-256 key: 32 bytes in unpadded base64url.
	coordinate := str(base64.RawURLEncoding.EncodedLen(256 / 8))
	quantity := integer(1, carts.MaxQuantity)
	hidden := quire.HiddenClass(false)
	email := schema{"type": "string", "format": "email", "maxLength": users.MaxEmailLen,
		"pattern":     "^[^" + hidden + "]+@[^@" + hidden + "]+\\.[^@" + hidden + "]+$",
		"description": fmt.Sprintf("One bare address whose domain has a dot, at most %d bytes, with %s", users.MaxEmailLen, textRule)}
	status := func(v int) schema {
		if v < 2 {
			return schema{"type": "string", "enum": []any{"AVAILABLE", "DISCONTINUED"}}
		}
		return schema{"type": "string", "enum": []any{"AVAILABLE", "DISCONTINUED", "ARCHIVED"}}
	}
	userBase := schema{
		"id": id, "email": email, "role": schema{"type": "string", "enum": []any{"customer", "admin"}},
		"status": schema{"type": "string", "enum": []any{"ACTIVE", "CLOSED"}}, "balance": money(0, users.MaxBalance), "profile": ref("Profile"),
		"created_at": datetime, "updated_at": datetime,
		"_links": with(object(schema{"deposit": path, "close_account": path}, "deposit", "close_account"), schema{
			"description": "The actions the caller may take on the account now, as paths: they follow the caller " +
				"(deposit for an admin, close_account for the owner or an admin) and the state (none once CLOSED), " +
				"and are empty for an anonymous caller, as in sign-up's answer."}),
	}
	userWrite := schema{
		"email": email, "role": schema{"type": "string", "enum": []any{"customer", "admin"}, "description": adminSets},
		"status":   schema{"type": "string", "enum": []any{"ACTIVE", "CLOSED"}, "description": adminSets},
		"password": schema{"type": "string", "minLength": password.MinLength, "maxLength": password.MaxLength, "writeOnly": true},
		"current_password": schema{"type": "string", "maxLength": password.MaxLength, "writeOnly": true,
			"description": "Required to change one's own email or password: the password now (403 wrong-password otherwise)."},
		"id": schema{"readOnly": true}, "balance": schema{"readOnly": true}, "profile": schema{"readOnly": true},
		"_links": schema{"readOnly": true}, "created_at": schema{"readOnly": true}, "updated_at": schema{"readOnly": true},
	}
	writeOptional := []string{"role", "status", "password", "current_password", "id", "balance", "profile", "_links", "created_at", "updated_at"}
	signUpOptional := slices.DeleteFunc(slices.Clone(writeOptional), func(f string) bool { return f == "password" })
	userName := text(users.MaxNameLen)
	name := text(catalog.MaxNameLen)
	product := func(v int) schema {
		return schema{"id": id, "name": name, "price": price, "status": status(v), "author_id": id, "links": links}
	}
	productWrite := func(v int) schema {
		return object(schema{"name": name, "price": price, "status": status(v),
			"author_id": with(id, schema{"description": "The id of an author; one no author has is 400"}),
			"id":        schema{"readOnly": true}, "links": schema{"readOnly": true}}, "id", "links")
	}
	cartLine := func(v int) schema {
		return object(schema{"product_id": id, "name": name, "price": price, "status": status(v), "quantity": quantity, "subtotal": anyMoney, "links": links})
	}
	out := schema{
		"ID":   integer(1, int64(quire.MaxID)),
		"Link": object(schema{"rel": str(httpapi.MaxRelLen), "href": path}),
		"Problem": object(schema{
			"type": problemType(), "title": str(titleLen()), "status": integer(100, 599),
			"detail": str(rest.MaxDetailLen), "instance": str(rest.MaxURLLen), "request_id": str(rest.RequestIDLen),
			"errors": arrayOf(object(schema{"pointer": str(rest.MaxPointerLen), "detail": str(rest.MaxDetailLen)}), rest.MaxFieldErrors),
		}, "detail", "instance", "request_id", "errors"),
		"Health": object(schema{"status": str(len("ok")), "database": str(len("ok"))}),
		"Config": schema{"type": "object", "description": "The configuration document: any JSON object"},
		"Credentials": object(schema{
			"email": schema{"type": "string", "maxLength": quire.MaxEmailLen,
				"description": fmt.Sprintf("At most %d bytes: no account has a longer one", quire.MaxEmailLen)},
			"password": schema{"type": "string", "maxLength": password.MaxLength, "writeOnly": true},
		}),
		"Token": object(schema{"access_token": str(login.MaxTokenBytes), "token_type": constant("Bearer"), "expires_in": seconds,
			"refresh_token": with(str(login.RefreshTokenLen), schema{
				"description": "Opaque; trade it at POST /tokens before refresh_expires_in seconds pass. Keep it secret."}),
			"refresh_expires_in": seconds}),
		"RefreshRequest": object(schema{"refresh_token": str(login.RefreshTokenLen)}),
		"DeleteRequest": object(schema{"current_password": schema{"type": "string", "maxLength": password.MaxLength, "writeOnly": true,
			"description": "Required to delete one's own account: the password now (403 wrong-password otherwise). " +
				"An admin deleting another user sends no body."}}),
		"JWKS": object(schema{"keys": arrayOf(object(schema{
			"kty": constant("EC"), "crv": constant("P-256"), "alg": constant("ES256"),
			"use": constant("sig"), "kid": str(login.MaxKeyIDLen), "x": coordinate, "y": coordinate,
		}), login.MaxKeys)}),
		"Profile": object(schema{
			"bio": schema{"type": "string", "maxLength": users.MaxBioLen, "pattern": quire.TextPattern(true, false),
				"description": "Lines ended by line feeds (U+000A), with " + textRule},
			"location": schema{"type": "string", "maxLength": users.MaxLocationLen, "pattern": quire.TextPattern(false, false),
				"description": "One line, with " + textRule},
			"website": schema{"type": "string", "maxLength": users.MaxWebsiteLen,
				"pattern":     "^([Hh][Tt][Tt][Pp][Ss]?://[^ /?#" + hidden + "]+[^" + hidden + "]*)?$",
				"description": "Empty, or an http or https URL, with " + textRule},
			"newsletter": schema{"type": "boolean"},
		}, "bio", "location", "website", "newsletter"),
		"UserV1": object(with(userBase, schema{
			"first_name": schema{"type": "string", "minLength": 1, "maxLength": users.MaxNameLen},
			"last_name": schema{"type": "string", "maxLength": users.MaxNameLen,
				"description": "Empty when the name was written in API v2 as one word"},
		}), "profile"),
		"UserV2": object(with(userBase, schema{"name": schema{"type": "string", "minLength": 1, "maxLength": 2*users.MaxNameLen + 1,
			"description": "first_name and last_name of API v1, with a space between when last_name is not empty"}}), "profile"),
		"UserWriteV1":  object(with(userWrite, schema{"first_name": userName, "last_name": userName}), writeOptional...),
		"UserWriteV2":  object(with(userWrite, schema{"name": userName}), writeOptional...),
		"UserCreateV1": object(with(userWrite, schema{"first_name": userName, "last_name": userName}), signUpOptional...),
		"UserCreateV2": object(with(userWrite, schema{"name": userName}), signUpOptional...),
		"Deposit": object(schema{"amount": with(money(users.MinDeposit, users.MaxDeposit), schema{
			"description": fmt.Sprintf("%s. From %s to %s; the balance never passes %s (409 balance-limit)",
				moneyWords, users.MinDeposit, users.MaxDeposit, users.MaxBalance)})}),
		"Author":       object(schema{"id": id, "name": name, "links": links}),
		"AuthorWrite":  object(schema{"name": name, "id": schema{"readOnly": true}, "links": schema{"readOnly": true}}, "id", "links"),
		"CartAddition": object(schema{"product_id": id, "quantity": quantity}),
		"Quantity":     object(schema{"quantity": quantity}),
		"Order": object(schema{
			"id": id, "user_id": id, "total": anyMoney, "created_at": datetime,
			"items": with(arrayOf(object(schema{"product_id": id, "name": str(catalog.MaxNameLen), "price": price, "quantity": quantity,
				"subtotal": anyMoney}), carts.MaxItems), schema{"minItems": 1}),
		}),
	}
	for _, v := range routes.Versions {
		out[fmt.Sprintf("ProductV%d", v)] = object(product(v))
		out[fmt.Sprintf("ProductWriteV%d", v)] = productWrite(v)
		out[fmt.Sprintf("LandingV%d", v)] = object(schema{"featured": arrayOf(object(with(product(v), schema{"author_name": name})), catalog.MaxFeatured)})
		out[fmt.Sprintf("CartV%d", v)] = object(schema{"items": arrayOf(cartLine(v), carts.MaxItems), "total": anyMoney})
	}
	return out
}
