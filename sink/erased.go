package sink

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
)

// The identities of erased people (docs/personal-data.md, "What erasure keeps"). Erasing a
// person's identifying data blanks the emails the onboarding ledger kept of them, and with them
// what made their onboarding exactly-once: the same person dropped again (the same file, a
// re-export, another file) would be sent as new, and the source would create them under a new id
// the erasure does not cover. So an erasure of a person keeps, in erased_identities, a keyed
// fingerprint of every email they ever had (their employees row, its every version, their
// onboarding rows by employee id): HMAC-SHA256 under the warehouse's own secret (table
// erasure_secret, 32 random bytes made on first need) of the email trimmed and in lower case.
// Onboarding refuses a hire whose fingerprint an erasure in force holds (Store.ErasedEmail), and
// the ledger never keeps such an email (PutOnboardingRow). A fingerprint cannot be read back;
// without the secret it confirms no guess either. Lifting the erasure deletes them.

// erasureSecretLen is the secret's size in bytes.
const erasureSecretLen = 32

// erasureSecret is the warehouse's fingerprint secret, made (32 bytes from crypto/rand) when
// create and there is none yet: INSERT … ON CONFLICT DO NOTHING, then SELECT, so that two
// processes making it at once end up with the one that was written first. nil, without create,
// when there is none: no fingerprint was ever kept.
func erasureSecret(ctx context.Context, q sqlx.ExtContext, create bool) ([]byte, error) {
	if create {
		fresh := make([]byte, erasureSecretLen)
		if _, err := rand.Read(fresh); err != nil {
			return nil, fmt.Errorf("make the erasure secret: %w", err)
		}
		if _, err := q.ExecContext(ctx, q.Rebind(`INSERT INTO erasure_secret (id, secret) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`), fresh); err != nil {
			return nil, fmt.Errorf("make the erasure secret: %w", err)
		}
	}
	var secret []byte
	err := q.QueryRowxContext(ctx, `SELECT secret FROM erasure_secret WHERE id = 1`).Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) && !create {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the erasure secret: %w", err)
	}
	if len(secret) != erasureSecretLen {
		return nil, fmt.Errorf("read the erasure secret: %d bytes, want %d", len(secret), erasureSecretLen)
	}
	return secret, nil
}

// normalEmail is an email as it is fingerprinted: trimmed, in lower case.
func normalEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// emailKey is the fingerprint of email under secret: HMAC-SHA256 of the normal email, in hex.
func emailKey(secret []byte, email string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(normalEmail(email)))
	return hex.EncodeToString(m.Sum(nil))
}

// ErasedEmail is the id of the oldest erasure in force that holds the email's fingerprint (the
// person it was erased of had it), or 0: onboarding refuses to create such a person again until
// the erasure is lifted. An empty email is no one's. Onboarding asks it of every row, and the
// ledger of every write of one, so the secret, once read, is kept: it never changes.
func (s *Store) ErasedEmail(ctx context.Context, email string) (int64, error) {
	if normalEmail(email) == "" {
		return 0, nil
	}
	secret := s.erasureKey.Load()
	if secret == nil {
		// Read outside any transaction: what is kept is a committed secret, never the one a
		// dry run's erase made and rolled back.
		read, err := erasureSecret(ctx, s.db, false)
		if err != nil {
			return 0, fmt.Errorf("check the erasures: %w", busyErr(err))
		}
		if read == nil {
			return 0, nil // no erasure has kept a fingerprint yet
		}
		s.erasureKey.Store(&read)
		secret = &read
	}
	var id sql.NullInt64
	err := s.db.QueryRowxContext(ctx, s.db.Rebind(`SELECT min(e.id) FROM erased_identities i JOIN erasures e ON e.id = i.erasure_id
WHERE i.email_key = ? AND e.lifted_at IS NULL`), emailKey(*secret, email)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("check the erasures: %w", busyErr(err))
	}
	return id.Int64, nil
}

// fingerprint keeps, for the erasure erasureID of the person id, the fingerprint of every email
// they ever had: emails (their employees row and its versions) and their onboarding rows' (by
// employee id), before the erasure blanks them.
func (x *eraser) fingerprint(ctx context.Context, erasureID, id int64, emails []string) error {
	var ledger []string
	if err := x.tx.SelectContext(ctx, &ledger, x.tx.Rebind(`SELECT DISTINCT email FROM onboarding_rows WHERE employee_id = ? AND email <> ''`), id); err != nil {
		return fmt.Errorf("read the person's onboarding emails: %w", err)
	}
	var all []string
	for _, e := range slices.Concat(emails, ledger) {
		if e = normalEmail(e); e != "" {
			all = append(all, e)
		}
	}
	if len(all) == 0 {
		return nil
	}
	secret, err := erasureSecret(ctx, x.tx, true)
	if err != nil {
		return err
	}
	keys := make([]string, len(all))
	for i, e := range all {
		keys[i] = emailKey(secret, e)
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if _, err := x.tx.ExecContext(ctx, x.tx.Rebind(`INSERT INTO erased_identities (erasure_id, email_key) VALUES (?, ?)
ON CONFLICT (erasure_id, email_key) DO NOTHING`), erasureID, k); err != nil {
			return fmt.Errorf("keep the erased identities: %w", err)
		}
	}
	return nil
}
