package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
)

// SecretStore holds the private key set as a JWK Set.
type SecretStore interface {
	Load(ctx context.Context) ([]byte, error)
	Save(ctx context.Context, value []byte) error
}

// KeyResource is the CloudFormation custom resource (Custom::SigningKeys)
// that creates the signing keys in their secret and rotates them. The
// login function serves it, being the only one that may read the secret.
//
// Create writes a new key set of one key. Update with a new Generation
// property adds a key in front and keeps the previous ones (MaxKeys in
// all); another Update changes nothing. Delete leaves the secret to the
// stack. Each answers with the public key set as the attribute Jwks, which
// the stack gives the authorizer, and the signing key's id as SigningKeyId.
type KeyResource struct {
	Secret SecretStore
	// OnSave, when set, gets every key set written, so that the instance
	// that wrote it signs with it at once.
	OnSave func(KeySet)
	Now    func() time.Time
}

// Handle answers one custom resource request.
func (k *KeyResource) Handle(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
	physicalID, _ := ev.ResourceProperties["SecretId"].(string)
	if physicalID == "" {
		return "", nil, fmt.Errorf("signing keys: the SecretId property is missing")
	}
	var keys KeySet
	switch {
	case ev.RequestType == cfn.RequestDelete:
		return ev.PhysicalResourceID, nil, nil
	case ev.RequestType == cfn.RequestCreate:
		// The secret holds the stack's placeholder: start a new set.
	default:
		data, err := k.Secret.Load(ctx)
		if err != nil {
			return "", nil, err
		}
		if keys, err = ParseKeySet(data); err != nil {
			return "", nil, fmt.Errorf("signing keys in the secret: %w", err)
		}
		if fmt.Sprint(ev.ResourceProperties["Generation"]) == fmt.Sprint(ev.OldResourceProperties["Generation"]) {
			return physicalID, attributes(keys), nil
		}
	}
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	key, err := GenerateKey(now())
	if err != nil {
		return "", nil, err
	}
	keys = keys.Rotate(key)
	data, err := keys.MarshalJSON()
	if err != nil {
		return "", nil, err
	}
	if err := k.Secret.Save(ctx, data); err != nil {
		return "", nil, err
	}
	if k.OnSave != nil {
		k.OnSave(keys)
	}
	return physicalID, attributes(keys), nil
}

func attributes(keys KeySet) map[string]any {
	public, _ := keys.PublicSet().MarshalJSON() // parsed keys always marshal
	signing, _ := keys.Signing()
	return map[string]any{"Jwks": string(public), "SigningKeyId": signing.ID}
}
