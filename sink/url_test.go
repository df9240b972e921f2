package sink_test

import (
	"context"
	"encoding/base32"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want schema.Dialect // "" for refused
		says string         // a part of the refusal
	}{
		{"postgres://u:pw@db:5432/hr?sslmode=require", schema.Postgres, ""},
		{"postgresql://db/hr", schema.Postgres, ""},
		{"postgres:///hr?host=/var/run/postgresql", schema.Postgres, ""},
		{"hrsync.db", schema.SQLite, ""},
		{"/var/lib/hrsync/hrsync.db", schema.SQLite, ""},
		{"./data/my warehouse.db", schema.SQLite, ""},
		{"./a=b.db", schema.SQLite, ""},
		{"file:hrsync.db", schema.SQLite, ""},
		{"file:///var/lib/hrsync/hrsync.db?mode=rwc", schema.SQLite, ""},
		{"sqlite:hrsync.db", schema.SQLite, ""},
		{"sqlite:///var/lib/hrsync/hrsync.db", schema.SQLite, ""},
		{"./odd:name.db", schema.SQLite, ""},

		{"", "", "empty"},
		{"host=db.internal port=5432 dbname=hr user=hrsync password=Sup3r-Secret", "", "key=value"},
		{"dbname=hr", "", "key=value"},
		{"  host = db password = 'a b c'", "", "key=value"},
		{"sslmode=require host=db", "", "key=value"},
		{"mysql://u:pw@db/hr", "", "URL scheme"},
		{"https://example.com/hr.db", "", "URL scheme"},
		{"odd:name.db", "", "URL scheme"},
		{"sqlite:", "", "SQLite file path"},
		{"file:", "", "SQLite file path"},
		{"sqlite://", "", "SQLite file path"},
		{"hr.db\npassword=x", "", "control characters"},
		{"postgres://u:p#ss@db/hr", "", "percent-encode"},
		{"postgres://u:pw@db:port/hr", "", "percent-encode"},
		{"postgres://db/hr password=Sup3r-Secret", "", "spaces"},
		{"postgres://db/hr\tsslpassword=Sup3r-Secret", "", "spaces"},
	}
	for _, tt := range tests {
		got, err := sink.Classify(tt.in)
		if tt.want != "" {
			if err != nil || got != tt.want {
				t.Errorf("Classify(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !errors.Is(err, sink.ErrBadURL) {
			t.Errorf("Classify(%q) = %q, %v; want ErrBadURL", tt.in, got, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.says) || strings.Contains(msg, "\n") {
			t.Errorf("Classify(%q): %q, want one line saying %q", tt.in, msg, tt.says)
		}
		if tt.in != "" && strings.Contains(msg, tt.in) {
			t.Errorf("Classify(%q) echoes it: %s", tt.in, msg)
		}
		for _, secret := range []string{"Sup3r-Secret", "pw", "p#ss", "a b c", "name.db"} {
			if strings.Contains(tt.in, secret) && strings.Contains(msg, secret) {
				t.Errorf("Classify(%q) echoes %q: %s", tt.in, secret, msg)
			}
		}
	}
}

// TestClassifyTypos: a string that is almost a URL hrsync reads is refused saying what it looks
// like and what to write instead, both with their passwords replaced; never taken for a SQLite
// file path (which made "postgres:/host/db" a file hrsync failed to open).
func TestClassifyTypos(t *testing.T) {
	t.Parallel()
	const secret = "Sup3r-Secret"
	tests := []struct{ in, want string }{
		{"postgres:/host/db", `bad warehouse URL "postgres:/host/db": looks like a Postgres URL missing "//" after "postgres:": use postgres://host/db`},
		{"postgresql:/host/db", `bad warehouse URL "postgresql:/host/db": looks like a Postgres URL missing "//" after "postgresql:": use postgresql://host/db`},
		{"postgres:host:5432/db?sslmode=require", `bad warehouse URL "postgres:host:5432/db?sslmode=require": looks like a Postgres URL missing "//" after "postgres:": use postgres://host:5432/db?sslmode=require`},
		{"postgres:db/hr", `bad warehouse URL "postgres:db/hr": looks like a Postgres URL missing "//" after "postgres:": use postgres://db/hr`},
		{"postgres:/u:" + secret + "@host/db", `bad warehouse URL "postgres:/u:xxxxx@host/db": looks like a Postgres URL missing "//" after "postgres:": use postgres://u:xxxxx@host/db`},
		{"postgres:/host/db?sslmode=require&password=" + secret, `bad warehouse URL "postgres:/host/db?sslmode=require&password=xxxxx": looks like a Postgres URL missing "//" after "postgres:": use postgres://host/db?sslmode=require&password=xxxxx`},
		{"Postgres:/host/db", `bad warehouse URL "Postgres:/host/db": looks like a Postgres URL missing "//" after "postgres:": use postgres://host/db`},
		{"POSTGRES://u:" + secret + "@db/hr", `bad warehouse URL "POSTGRES://u:xxxxx@db/hr": looks like a Postgres URL with its scheme in capitals: use postgres://u:xxxxx@db/hr`},
		{"postgres//host/db", `bad warehouse URL "postgres//host/db": looks like a Postgres URL missing the ":" of "postgres://": use postgres://host/db`},
		{"postgresql//u:" + secret + "@host/db", `bad warehouse URL "postgresql//u:xxxxx@host/db": looks like a Postgres URL missing the ":" of "postgresql://": use postgresql://u:xxxxx@host/db`},
		{"postgress://host/db", `bad warehouse URL "postgress://host/db": "postgress:" is not a scheme hrsync reads (Postgres is postgres://): use postgres://host/db`},
		{"postgre://host/db", `"postgre:" is not a scheme hrsync reads (Postgres is postgres://): use postgres://host/db`},
		{"pgsql://u:" + secret + "@host/db", `bad warehouse URL "pgsql://u:xxxxx@host/db": "pgsql:" is not a scheme hrsync reads (Postgres is postgres://): use postgres://u:xxxxx@host/db`},
		{"localhost:5432/hr", `bad warehouse URL "localhost:5432/hr": looks like a Postgres host:port without its scheme: use postgres://localhost:5432/hr`},
		{"db.internal:5432", `looks like a Postgres host:port without its scheme: use postgres://db.internal:5432`},
		{"hrsync:" + secret + "@db.internal:5432/hr", `bad warehouse URL "hrsync:xxxxx@db.internal:5432/hr": looks like a Postgres user@host without its scheme: use postgres://hrsync:xxxxx@db.internal:5432/hr`},
		{"sqlite3:/var/lib/hrsync/h.db", `bad warehouse URL "sqlite3:/var/lib/hrsync/h.db": "sqlite3:" is not a scheme hrsync reads (SQLite is sqlite: or a plain file path): use sqlite:/var/lib/hrsync/h.db`},
		{"sqlit:h.db", `"sqlit:" is not a scheme hrsync reads (SQLite is sqlite: or a plain file path): use sqlite:h.db`},
		// What would be written instead does not parse either: neither is shown.
		{"postgres:/u:p#" + secret + "@db/hr", `bad warehouse URL: it looks like a Postgres URL missing "//" after "postgres:"; want postgres://user:password@host:5432/dbname or a SQLite file path`},
		{"postgres:", `bad warehouse URL: it looks like a Postgres URL missing "//" after "postgres:"; want postgres://`},
	}
	for _, tt := range tests {
		_, err := sink.Classify(tt.in)
		var te *sink.URLTypoError
		if !errors.Is(err, sink.ErrBadURL) || !errors.As(err, &te) {
			t.Errorf("Classify(%q) = %v; want a URLTypoError", tt.in, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, secret) {
			t.Errorf("Classify(%q):\n got %s\nwant %s", tt.in, msg, tt.want)
		}
	}
	// Forms near these that are read, or refused as before.
	for in, want := range map[string]schema.Dialect{"sqlite:/tmp/x.db": schema.SQLite, "sqlite:///tmp/x.db": schema.SQLite,
		"file:x@y.db": schema.SQLite, "sqlite:u:pw@x.db": schema.SQLite, "./localhost:5432": schema.SQLite, "postgres:///hr": schema.Postgres} {
		if got, err := sink.Classify(in); err != nil || got != want {
			t.Errorf("Classify(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"odd:name.db", "mysql://u:pw@db/hr", "https://example.com/hr.db"} {
		var te *sink.URLTypoError
		if _, err := sink.Classify(in); errors.As(err, &te) || err == nil || !strings.Contains(err.Error(), "URL scheme") {
			t.Errorf("Classify(%q) = %v; want the refusal of another scheme", in, err)
		}
	}
}

// Every printed form of a warehouse string hides its passwords.
func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, redacted, without string
	}{
		{"postgres://u:secret@db:5432/hr?sslmode=require", "postgres://u:xxxxx@db:5432/hr?sslmode=require", "postgres://u@db:5432/hr?sslmode=require"},
		{"postgres://db/hr", "postgres://db/hr", "postgres://db/hr"},
		{"postgres://u@db/x", "postgres://u@db/x", "postgres://u@db/x"},
		{"postgres://u:p%40ss@db/x", "postgres://u:xxxxx@db/x", "postgres://u@db/x"},
		{"postgresql://db/hr?user=u&password=secret&sslmode=verify-full&sslpassword=keypass",
			"postgresql://db/hr?user=u&password=xxxxx&sslmode=verify-full&sslpassword=xxxxx",
			"postgresql://db/hr?user=u&sslmode=verify-full"},
		{"postgres://db/hr?PassWord=secret", "postgres://db/hr?PassWord=xxxxx", "postgres://db/hr"},
		{"postgres://db/hr?pass%77ord=secret", "postgres://db/hr?pass%77ord=xxxxx", "postgres://db/hr"},
		{"postgres://u:p#ss@db/hr", "(a warehouse string hrsync does not read)", "(a warehouse string hrsync does not read)"},
		{"hrsync.db", "hrsync.db", "hrsync.db"},
		{"file:/var/lib/hrsync/hrsync.db", "file:/var/lib/hrsync/hrsync.db", "file:/var/lib/hrsync/hrsync.db"},
		{"host=db password=secret", "(a warehouse string hrsync does not read)", "(a warehouse string hrsync does not read)"},
		{"mysql://u:secret@db/hr", "(a warehouse string hrsync does not read)", "(a warehouse string hrsync does not read)"},
	}
	for _, tt := range tests {
		if got := sink.RedactURL(tt.in); got != tt.redacted {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.redacted)
		}
		if got := sink.WithoutPassword(tt.in); got != tt.without {
			t.Errorf("WithoutPassword(%q) = %q, want %q", tt.in, got, tt.without)
		}
	}
}

// An error from the driver that quotes the URL's password (here lib/pq repeats an unsupported
// parameter's value) is printed without it, and still matches ErrBadURL.
func TestOpenErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	const secret = "Hunter2-Sekret"
	for _, u := range []string{
		"postgres://u:" + secret + "@127.0.0.1:1/hr?sslmode=" + secret,
		"postgres://u@127.0.0.1:1/hr?password=" + secret + "&sslmode=" + secret,
		"postgres://127.0.0.1:1/hr?sslpassword=" + secret + "&target_session_attrs=" + secret,
	} {
		_, err := sink.Open(context.Background(), u, sink.Options{})
		if err == nil {
			t.Fatalf("Open(%s) succeeded", sink.RedactURL(u))
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error holds the password: %v", err)
		}
		if !errors.Is(err, sink.ErrBadURL) {
			t.Errorf("error %v does not match ErrBadURL", err)
		}
	}
}

// A key=value string is refused by Open before anything is created: no file named after it.
func TestOpenRefusesKeyValueStrings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const secret = "Hunter2-Sekret"
	for _, u := range []string{"host=localhost dbname=hr password=" + secret, "password=" + secret, "sqlserver://sa:" + secret + "@db"} {
		_, err := sink.Open(context.Background(), u, sink.Options{})
		if !errors.Is(err, sink.ErrBadURL) || strings.Contains(err.Error(), secret) {
			t.Errorf("Open: %v, want ErrBadURL without the password", err)
		}
		if _, err := sink.Migrate(context.Background(), u, sink.Options{}); !errors.Is(err, sink.ErrBadURL) {
			t.Errorf("Migrate: %v, want ErrBadURL", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("files were created: %v", ents)
	}
	if _, err := sink.SQLitePath("host=db password=" + secret); !errors.Is(err, sink.ErrBadURL) {
		t.Errorf("SQLitePath of a key=value string: %v", err)
	}
	if p, err := sink.SQLitePath("file:" + filepath.Join(dir, "w.db") + "?mode=rwc"); err != nil || p != filepath.Join(dir, "w.db") {
		t.Errorf("SQLitePath(file:…) = %q, %v", p, err)
	}
}

// FuzzClassify: Classify never panics; its refusals are a fixed set of messages that never
// repeat the input, but for a near miss (URLTypoError), which shows it without its passwords; RedactURL and WithoutPassword never print a password a Postgres URL or a
// key=value string holds.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"", "hrsync.db", "postgres://u:p@h/db", "host=h password=p", "file:x", "sqlite://", "a:b", "\x00", "postgres://%zz"} {
		f.Add(s, []byte("pw"))
	}
	f.Fuzz(func(t *testing.T, s string, pwBytes []byte) {
		if len(pwBytes) == 0 {
			return
		}
		// A password no fixed text holds: the marker is upper case, all else of the forms lower.
		pw := "ZQZ" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(pwBytes)
		forms := []string{
			s,
			"postgres://u:" + pw + "@" + s + "/db",
			"postgres://u:" + pw + "@db/" + s,
			"postgresql://db/hr?password=" + pw + "&x=" + s,
			"postgres://db/" + s + "?sslpassword=" + pw,
			"host=" + s + " password=" + pw,
			s + " password=" + pw,
			"password=" + pw + s,
			s + pw,
		}
		for _, in := range forms {
			d, err := sink.Classify(in)
			var te *sink.URLTypoError
			if errors.As(err, &te) {
				// A near miss is shown, its passwords replaced (s+pw holds pw as a host or a
				// path, not a password).
				if msg := err.Error(); in != s+pw && strings.Contains(msg, pw) {
					t.Fatalf("Classify(%q) shows the password: %s", in, msg)
				}
				if !errors.Is(err, sink.ErrBadURL) {
					t.Fatalf("Classify(%q): %v does not match ErrBadURL", in, err)
				}
			} else if err != nil {
				msg := err.Error()
				if strings.Contains(msg, pw) || (len(s) > 3 && strings.Contains(msg, s) && !strings.Contains(classifyTexts, s)) {
					t.Fatalf("Classify(%q) repeats its input: %s", in, msg)
				}
				if !strings.Contains(classifyTexts, msg) {
					t.Fatalf("Classify(%q): a message not among the fixed ones: %s", in, msg)
				}
			} else if d != schema.Postgres && d != schema.SQLite {
				t.Fatalf("Classify(%q) = %q", in, d)
			}
			if in == s+pw || (d == schema.SQLite && err == nil) {
				continue // a file path: printed as it is, it holds no password
			}
			for _, out := range []string{sink.RedactURL(in), sink.WithoutPassword(in)} {
				if strings.Contains(out, pw) {
					t.Fatalf("%q printed as %q", in, out)
				}
			}
		}
	})
}

// classifyTexts are Classify's refusals, which are fixed: none depends on its input.
var classifyTexts = func() string {
	var b strings.Builder
	for _, s := range []string{"", "host=x", "mysql://x", "sqlite:", "a\n", "postgres://%zz", "postgres:// "} {
		_, err := sink.Classify(s)
		b.WriteString(err.Error() + "\n")
	}
	return b.String()
}()
