package auth

import (
	"context"
	"fmt"
	"time"
)

// KeySource reads the private key set, a JWK Set: what the auth function
// does with the secret that holds it, whose role lets it read and never
// write (the stack grants the Secrets Manager actions of these methods).
type KeySource interface {
	Load(ctx context.Context) ([]byte, error)
}

// SecretStore holds the private key set as a JWK Set: what the keys
// function does with the secret, the one that may write it.
type SecretStore interface {
	KeySource
	Save(ctx context.Context, value []byte) error
}

// KeyResource is the CloudFormation custom resource (Custom::SigningKeys)
// that creates the signing keys in their secret and rotates them. The keys
// function serves it, being the only one that may write the secret; login
// only reads it.
//
// Create writes a new key set of one key. Update with a new Generation
// property adds a key in front and keeps the previous ones that tokens of
// Lifetime may still need (see KeySet.Rotate); another Update changes
// nothing. Delete leaves the secret to the stack. Each answers with the
// public key set as the attribute Jwks, which the stack gives the
// authorizer, and the id of the key that signs now as SigningKeyId.
type KeyResource struct {
	Secret   SecretStore
	Lifetime time.Duration // of access tokens
	Now      func() time.Time
}

// KeyRequest is a custom resource request as KeyResource reads it: the
// keys function's main makes one of CloudFormation's event.
type KeyRequest struct {
	Type          string // Create, Update or Delete
	PhysicalID    string // the resource's id, on Update and Delete
	Properties    map[string]any
	OldProperties map[string]any // on Update
}

// Handle answers one custom resource request.
func (k *KeyResource) Handle(ctx context.Context, ev KeyRequest) (string, map[string]any, error) {
	physicalID, _ := ev.Properties["SecretId"].(string)
	if physicalID == "" {
		return "", nil, fmt.Errorf("signing keys: the SecretId property is missing")
	}
	now := time.Now()
	if k.Now != nil {
		now = k.Now()
	}
	var keys KeySet
	switch ev.Type {
	case "Delete":
		return ev.PhysicalID, nil, nil
	case "Create":
		// The secret holds the stack's placeholder: start a new set.
	default:
		data, err := k.Secret.Load(ctx)
		if err != nil {
			return "", nil, err
		}
		if keys, err = ParseKeySet(data); err != nil {
			return "", nil, fmt.Errorf("signing keys in the secret: %w", err)
		}
		if fmt.Sprint(ev.Properties["Generation"]) == fmt.Sprint(ev.OldProperties["Generation"]) {
			return physicalID, attributes(keys, now), nil
		}
	}
	key, err := GenerateKey(now)
	if err != nil {
		return "", nil, err
	}
	keys = keys.Rotate(key, now, k.Lifetime)
	data, err := keys.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	if err := k.Secret.Save(ctx, data); err != nil {
		return "", nil, err
	}
	return physicalID, attributes(keys, now), nil
}

func attributes(keys KeySet, now time.Time) map[string]any {
	public, _ := keys.PublicSet().MarshalJSON() // parsed keys always marshal
	signing, _ := keys.Signing(now)
	return map[string]any{"Jwks": string(public), "SigningKeyId": signing.ID}
}
