package sink

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The erasure journal (docs/operations.md, "Backup and restore"). A warehouse restored from a
// backup taken before an erasure holds the person again, and its erasures table, restored with
// it, no longer says to erase them. So every erasure and lift is also written, once it has
// committed, to a file outside the warehouse: one JSON line each, appended, fsynced, private
// (0600). A line holds what re-applying it needs and no value of the person: the account, the
// kind, collection and id of what was erased, the classes, the cause and reason, when, and the
// keyed fingerprints of the person's emails (erased.go) with an id of the secret they were
// keyed with. ReapplyJournal brings a restored warehouse up to date from it.
//
// The journal is written by catching up: every write appends each erasure and lift the
// warehouse holds that the journal does not, so one that could not be written (a full disk)
// is written by the next erase, lift or backup. An erasure is known in both by what it is
// (journalKey), not by its id: ids are given anew in a restored warehouse.

// ErrNotJournaled is wrapped by an erase's or lift's error when it committed but could not
// then be written to the erasure journal: it holds in the warehouse; the next erase, lift or
// backup writes it (or run hrsync backup now).
var ErrNotJournaled = errors.New("done in the warehouse, but not written to the erasure journal")

// journalLockWait bounds how long a write waits for another process's write to the journal.
const journalLockWait = 10 * time.Second

// journalEntry is one line of the journal: Op "erase" (the erasure as it was recorded) or "lift".
type journalEntry struct {
	Op      string `json:"op"`
	Account string `json:"account"`
	// ID is the erasure's id in the warehouse that wrote the line, for people reading it.
	ID         int64  `json:"id"`
	Kind       string `json:"kind"`
	Collection string `json:"collection"`
	SubjectID  int64  `json:"subject_id"`
	Classes    string `json:"classes"`
	Cause      string `json:"cause"`
	Reason     string `json:"reason,omitempty"`
	ErasedAt   string `json:"erased_at"`
	LiftedAt   string `json:"lifted_at,omitempty"`
	LiftReason string `json:"lift_reason,omitempty"`
	// SecretID names the secret Fingerprints are keyed with (secretID), so that they are kept
	// again only in a warehouse with that secret.
	SecretID     string   `json:"secret_id,omitempty"`
	Fingerprints []string `json:"fingerprints,omitempty"`
}

// journalKey is what an erasure is known by in the journal and the warehouse alike.
func journalKey(kind, collection string, subject int64, classes, cause, erasedAt string) string {
	return kind + "|" + collection + "|" + strconv.FormatInt(subject, 10) + "|" + classes + "|" + cause + "|" + erasedAt
}

func (e journalEntry) key() string {
	return journalKey(e.Kind, e.Collection, e.SubjectID, e.Classes, e.Cause, e.ErasedAt)
}

func erasureKey(e Erasure) string {
	return journalKey(e.Kind, e.Collection, e.SubjectID, classNames(e.Classes), e.Cause, e.ErasedAt)
}

// secretID names the fingerprints' secret without giving anything of it away.
func secretID(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("hrsync erasure secret id"))
	return hex.EncodeToString(m.Sum(nil))[:16]
}

// JournalPath is the erasure journal of the warehouse: Options.ErasureJournal, or for a SQLite
// warehouse the file beside it; "" when it has none (Postgres, unconfigured).
func (s *Store) JournalPath() string {
	if s.opts.ErasureJournal != "" {
		return s.opts.ErasureJournal
	}
	if s.pg == nil {
		return s.location + ".erasures.jsonl"
	}
	return ""
}

// journalErasures brings the journal up to date with the warehouse's erasures and lifts
// (catching up): nothing without a journal. Its errors wrap ErrNotJournaled.
func (s *Store) journalErasures(ctx context.Context) error {
	path := s.JournalPath()
	if path == "" {
		return nil
	}
	if err := s.writeJournal(ctx, path); err != nil {
		return fmt.Errorf("%w %s: %w", ErrNotJournaled, path, err)
	}
	return nil
}

func (s *Store) writeJournal(ctx context.Context, path string) error {
	list, err := s.Erasures(ctx)
	if err != nil {
		return err
	}
	prints := map[int64][]string{}
	secret, err := erasureSecret(ctx, s.db, false)
	if err != nil {
		return err
	}
	if secret != nil {
		rows, err := s.db.QueryContext(ctx, `SELECT erasure_id, email_key FROM erased_identities ORDER BY erasure_id, email_key`)
		if err != nil {
			return fmt.Errorf("read the erased identities: %w", err)
		}
		for rows.Next() {
			var id int64
			var k string
			if err := rows.Scan(&id, &k); err != nil {
				rows.Close()
				return fmt.Errorf("read the erased identities: %w", err)
			}
			prints[id] = append(prints[id], k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the erased identities: %w", err)
		}
	}
	unlock, err := lockJournal(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	entries, tail, err := readJournal(path, s.opts.Account)
	if err != nil {
		return err
	}
	erased, lifted := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if e.Op == "lift" {
			lifted[e.key()] = true
		} else {
			erased[e.key()] = true
		}
	}
	var out bytes.Buffer
	if tail {
		out.WriteByte('\n') // after a line a crash left torn: that line is read as none
	}
	n := 0
	for _, e := range list {
		k := erasureKey(e)
		line := journalEntry{Account: s.opts.Account, ID: e.ID, Kind: e.Kind, Collection: e.Collection, SubjectID: e.SubjectID,
			Classes: classNames(e.Classes), Cause: e.Cause, Reason: e.Reason, ErasedAt: e.ErasedAt}
		if !erased[k] {
			line.Op = "erase"
			if fp := prints[e.ID]; len(fp) > 0 {
				line.SecretID, line.Fingerprints = secretID(secret), fp
			}
			if err := appendLine(&out, line); err != nil {
				return err
			}
			n++
		}
		if e.LiftedAt != "" && !lifted[k] {
			line.Op, line.LiftedAt, line.LiftReason = "lift", e.LiftedAt, e.LiftReason
			line.SecretID, line.Fingerprints = "", nil
			if err := appendLine(&out, line); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return appendJournal(path, out.Bytes())
}

func appendLine(b *bytes.Buffer, e journalEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b.Write(line)
	b.WriteByte('\n')
	return nil
}

// appendJournal appends data to the journal in one write and makes it durable: the file's
// content, and, when it was just made, its name in the folder.
func appendJournal(path string, data []byte) error {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, privateMode)
	if err != nil {
		return err
	}
	err = f.Chmod(privateMode) // whatever the umask made it
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = syncDir(filepath.Dir(path))
	}
	return err
}

// syncDir makes the names in dir durable (a file created or renamed into it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// readJournal reads the journal's lines of account, in order; none when there is no journal.
// torn is whether the file ends in a line a crash cut short (no newline). Such a line is
// skipped, there or anywhere (a later write started after it).
func readJournal(path, account string) (entries []journalEntry, torn bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		torn = true
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if !json.Valid(sc.Bytes()) {
			// A line cut short by a crash (each line is appended whole, in one write): what it
			// was writing, the next write appended again from the warehouse, whole.
			continue
		}
		var e journalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, false, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if e.Op != "erase" && e.Op != "lift" {
			return nil, false, fmt.Errorf("%s line %d: op %q: want erase or lift", path, n, e.Op)
		}
		if e.Account == account {
			entries = append(entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return entries, torn, nil
}

// lockJournal takes the journal's lock (an flock on the file beside it), waiting at most
// journalLockWait for another process's write to end.
func lockJournal(ctx context.Context, path string) (unlock func(), err error) {
	deadline := time.Now().Add(journalLockWait)
	for {
		f, ok, err := flock(path + ".lock")
		if err != nil {
			return nil, err
		}
		if ok {
			return func() { _ = f.Close() }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another process has been writing %s for %s", path, journalLockWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
