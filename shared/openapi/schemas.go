package openapi

import (
	"fmt"
	"maps"
	"slices"

	"github.com/quireapi/quire/shared/rest"
	"github.com/quireapi/quire/shared/routes"
)

func parameters() schema {
	q := func(name, description string, s schema) schema {
		return schema{"name": name, "in": "query", "required": false, "description": description, "schema": s}
	}
	key := func(name string) schema {
		return schema{
			"name": name, "in": "header", "required": false,
			"description": "Makes the request safe to retry: 1 to 255 printable ASCII characters, kept for 24 hours " +
				"in the caller's scope. The same key with the same request replays the first answer; with another, 422. " +
				"Idempotency-Key and X-Idempotency-Key mean the same; both with different values are 400.",
			"schema": schema{"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
		}
	}
	h := func(name, description string) schema {
		return schema{"name": name, "in": "header", "required": false, "description": description, "schema": schema{"type": "string"}}
	}
	return schema{
		"ifMatch": h("If-Match", `"*" or a list of entity tags. On a GET, the answer is 412 unless the representation's ETag `+
			`is one of them (strong comparison). On a PUT or DELETE, the write happens only when the resource exists ("*") or `+
			`its current state is one of them: the ETag of any of its representations, in any version or encoding. `+
			`Otherwise 412, a problem of type https://quire.dev/problems/precondition.`),
		"ifNoneMatch": h("If-None-Match", `"*" or a list of entity tags. On a GET, the answer is 304 Not Modified, without a body, `+
			`when the representation's ETag is one of them (weak comparison). On a PUT or DELETE, "*" writes only when the `+
			`resource does not exist yet, a list only when its current state is none of them; otherwise 412, a problem `+
			`of type https://quire.dev/problems/precondition.`),
		"ifMatchPurchase": h("If-Match", `The ETag of what the buyer saw, so that they pay exactly that: the product's `+
			`(GET /products/{id}) to buy one book, GET /cart's to pay the cart (its books' prices and status are part of it), `+
			`a strong tag of any API version. When what is bought changed since, the answer is 412, a problem of type `+
			`https://quire.dev/problems/precondition, and nothing is paid. Without it, the prices the request reads are charged (a function's catalog cache may be up to a second old).`),
		"acceptEncoding":  h("Accept-Encoding", "gzip (or *) with a quality above 0 gets the body gzip-compressed, with Content-Encoding: gzip"),
		"idempotencyKey":  key("Idempotency-Key"),
		"xIdempotencyKey": key("X-Idempotency-Key"),
		"limit":           q("limit", "Items per page", schema{"type": "integer", "minimum": 1, "maximum": rest.MaxLimit, "default": rest.DefaultLimit}),
		"cursor":          q("cursor", "Where the page starts: from the next link of the previous page", schema{"type": "string"}),
		"role":            q("role", "Only active users with this role", schema{"enum": []any{"customer", "admin"}}),
		"embed":           q("embed", "Add each user's profile", schema{"enum": []any{"profile"}}),
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

func schemas() schema {
	str := schema{"type": "string"}
	money := schema{"type": "number", "description": "An exact amount with two decimals, such as 12.50"}
	id := ref("ID")
	time := schema{"type": "string", "format": "date-time"}
	links := arrayOf(ref("Link"))
	status := func(v int) schema {
		if v < 2 {
			return schema{"enum": []any{"AVAILABLE", "DISCONTINUED"}}
		}
		return schema{"enum": []any{"AVAILABLE", "DISCONTINUED", "ARCHIVED"}}
	}
	userBase := schema{
		"id": id, "email": str, "role": schema{"enum": []any{"customer", "admin"}},
		"status": schema{"enum": []any{"ACTIVE", "CLOSED"}}, "balance": money, "profile": ref("Profile"),
		"created_at": time, "updated_at": time,
		"_links": with(object(schema{"deposit": str, "close_account": str}, "deposit", "close_account"), schema{
			"description": "The actions the caller may take on the account now, as paths: they follow the caller " +
				"(deposit for an admin, close_account for the owner or an admin) and the state (none once CLOSED), " +
				"and are empty for an anonymous caller, as in sign-up's answer."}),
	}
	userWrite := schema{
		"email": str, "role": schema{"enum": []any{"customer", "admin"}}, "status": schema{"enum": []any{"ACTIVE", "CLOSED"}},
		"password": schema{"type": "string", "minLength": 8, "maxLength": 128, "writeOnly": true},
		"current_password": schema{"type": "string", "writeOnly": true,
			"description": "Required to change one's own email or password: the password now (403 wrong-password otherwise)."},
		"id": schema{"readOnly": true}, "balance": schema{"readOnly": true}, "profile": schema{"readOnly": true},
		"_links": schema{"readOnly": true}, "created_at": schema{"readOnly": true}, "updated_at": schema{"readOnly": true},
	}
	writeOptional := []string{"role", "status", "password", "current_password", "id", "balance", "profile", "_links", "created_at", "updated_at"}
	product := func(v int) schema {
		return schema{"id": id, "name": str, "price": money, "status": status(v), "author_id": id, "links": links}
	}
	productWrite := func(v int) schema {
		return object(schema{"name": str, "price": money, "status": status(v), "author_id": id,
			"id": schema{"readOnly": true}, "links": schema{"readOnly": true}}, "id", "links")
	}
	cartLine := func(v int) schema {
		return object(schema{"product_id": id, "name": str, "price": money, "status": status(v), "quantity": schema{"type": "integer"}, "subtotal": money, "links": links})
	}
	out := schema{
		"ID":   schema{"type": "integer", "minimum": 1, "maximum": 9007199254740991},
		"Link": object(schema{"rel": str, "href": str}),
		"Problem": object(schema{
			"type": problemType(), "title": str, "status": schema{"type": "integer"}, "detail": str, "instance": str, "request_id": str,
			"errors": arrayOf(object(schema{"pointer": str, "detail": str})),
		}, "detail", "instance", "request_id", "errors"),
		"Health":      object(schema{"status": str, "database": str}),
		"Config":      schema{"type": "object", "description": "The configuration document: any JSON object"},
		"Credentials": object(schema{"email": str, "password": str}),
		"Token": object(schema{"access_token": str, "token_type": schema{"const": "Bearer"}, "expires_in": schema{"type": "integer"},
			"refresh_token":      schema{"type": "string", "description": "Opaque; trade it at POST /tokens before refresh_expires_in seconds pass. Keep it secret."},
			"refresh_expires_in": schema{"type": "integer"}}),
		"RefreshRequest": object(schema{"refresh_token": str}),
		"JWKS": object(schema{"keys": arrayOf(object(schema{
			"kty": schema{"const": "EC"}, "crv": schema{"const": "P-256"}, "alg": schema{"const": "ES256"},
			"use": schema{"const": "sig"}, "kid": str, "x": str, "y": str,
		}))}),
		"Profile": object(schema{
			"bio": schema{"type": "string", "maxLength": 500}, "location": schema{"type": "string", "maxLength": 100},
			"website": schema{"type": "string", "maxLength": 200}, "newsletter": schema{"type": "boolean"},
		}, "bio", "location", "website", "newsletter"),
		"UserV1":       object(with(userBase, schema{"first_name": str, "last_name": str}), "profile"),
		"UserV2":       object(with(userBase, schema{"name": str}), "profile"),
		"UserWriteV1":  object(with(userWrite, schema{"first_name": str, "last_name": str}), writeOptional...),
		"UserWriteV2":  object(with(userWrite, schema{"name": str}), writeOptional...),
		"Deposit":      object(schema{"amount": money}),
		"Author":       object(schema{"id": id, "name": str, "links": links}),
		"AuthorWrite":  object(schema{"name": str, "id": schema{"readOnly": true}, "links": schema{"readOnly": true}}, "id", "links"),
		"CartAddition": object(schema{"product_id": id, "quantity": schema{"type": "integer", "minimum": 1, "maximum": 99}}),
		"Quantity":     object(schema{"quantity": schema{"type": "integer", "minimum": 1, "maximum": 99}}),
		"Order": object(schema{
			"id": id, "user_id": id, "total": money, "created_at": time,
			"items": arrayOf(object(schema{"product_id": id, "name": str, "price": money, "quantity": schema{"type": "integer"}, "subtotal": money})),
		}),
	}
	for _, v := range routes.Versions {
		out[fmt.Sprintf("ProductV%d", v)] = object(product(v))
		out[fmt.Sprintf("ProductWriteV%d", v)] = productWrite(v)
		out[fmt.Sprintf("LandingV%d", v)] = object(schema{"featured": arrayOf(object(with(product(v), schema{"author_name": str})))})
		out[fmt.Sprintf("CartV%d", v)] = object(schema{"items": arrayOf(cartLine(v)), "total": money})
	}
	return out
}
