package v1

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// IdempotencyClaim asks to make the create of Hash under an Idempotency-Key, once: Client is
// who sent it (a serve key's name), Key the header's value. A record older than TTL is as good
// as absent; one still in progress after Stale is taken over.
type IdempotencyClaim struct {
	Client, Key, Hash string
	TTL, Stale        time.Duration
}

// IdempotencyRecord is what is kept of a create sent with an Idempotency-Key: the request's
// hash and, once answered, the answer. Status 0 is a create in progress; EmployeeID is set as
// soon as a local create committed, before its answer was kept.
type IdempotencyRecord struct {
	Hash       string
	Status     int
	Body       []byte
	Location   string
	EmployeeID int64
}

// ErasedRequestHash is the request hash of a create whose person was erased since: the hash of
// their name, email, job title and join date, unsalted, would let a guess of who they were be
// confirmed, so the erasure replaces it with this, which no hash (hex) equals. A retry under
// that Idempotency-Key cannot be told the same request any more, and is told so.
const ErasedRequestHash = "erased"

// Hash is the create's canonical form, hashed: two requests hash alike exactly when they
// create the same employee, whether sent as a form or as JSON.
func (ne NewEmployee) Hash() string {
	h := sha256.New()
	for _, f := range []string{ne.FirstName, ne.LastName, ne.Email, ne.JobTitle, ne.JoinDate} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ValidIdempotencyKey reports whether an Idempotency-Key value is usable: 1 to 255 printable
// ASCII characters.
func ValidIdempotencyKey(k string) bool {
	if k == "" || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}
