package sink

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/agnivade/levenshtein"

	"github.com/hrsync/hrsync/schema"
)

// What a warehouse string may be, and how one is printed. A warehouse string holds the
// warehouse's password, so it is never echoed when it is refused, and printed or logged only as
// RedactURL gives it.

// Classify says which warehouse rawURL names: Postgres for a postgres:// or postgresql:// URL,
// SQLite for a file path (or file:…, sqlite:…). Anything else is refused with an error wrapping
// ErrBadURL that says what form the string looks like and what to write instead, never the
// string itself: libpq's key=value form (host=… password=…), another scheme, control
// characters.
func Classify(rawURL string) (schema.Dialect, error) {
	switch {
	case rawURL == "":
		return "", fmt.Errorf("%w: empty (want postgres://… or a SQLite file path)", ErrBadURL)
	case backendOf(rawURL).kind() == schema.Postgres:
		if strings.ContainsFunc(rawURL, unicode.IsSpace) {
			return "", fmt.Errorf("%w: a postgres:// URL with spaces in it (key=value pairs after it?); put parameters in its query, ?sslmode=require&connect_timeout=5, and percent-encode spaces as %%20", ErrBadURL)
		}
		if _, err := url.Parse(rawURL); err != nil {
			return "", fmt.Errorf("%w: a postgres:// URL that does not parse; percent-encode the characters of its password and names that are not letters or digits (@ is %%40, / is %%2F, # is %%23)", ErrBadURL)
		}
		return schema.Postgres, nil
	case strings.ContainsFunc(rawURL, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("%w: it holds control characters (a line break?); want postgres://… or a SQLite file path", ErrBadURL)
	case keyValueForm.MatchString(rawURL):
		return "", fmt.Errorf("%w: it looks like libpq's key=value form (host=… dbname=…), which hrsync does not read; "+
			"write it as a URL, postgres://user:password@host:5432/dbname?sslmode=require, or give a SQLite file path", ErrBadURL)
	}
	if err := typo(rawURL); err != nil {
		return "", err
	}
	if _, err := sqlitePath(rawURL); err != nil {
		return "", err
	}
	return schema.SQLite, nil
}

// URLTypoError is a warehouse string that is almost a URL hrsync reads: a Postgres URL missing
// the // after its scheme (postgres:/host/db, postgres:host/db) or the colon (postgres//host/db),
// its scheme in capitals or misspelt (postgress://), a user:password@host or host:port without
// any scheme, sqlite3: for sqlite:. It says what was typed and what to write instead, with the
// passwords of both replaced (RedactURL); when the corrected string would not be read either
// (it does not parse), it shows neither. It matches ErrBadURL.
type URLTypoError struct {
	// Typed is the string as given, its passwords replaced; "" when it cannot be shown safely.
	Typed string
	// Problem is what looks wrong: `looks like a Postgres URL missing "//" after "postgres:"`.
	Problem string
	// Use is the string to write instead, its passwords replaced; "" with Typed.
	Use string
}

func (e *URLTypoError) Error() string {
	if e.Typed == "" {
		return ErrBadURL.Error() + ": it " + e.Problem + "; want postgres://user:password@host:5432/dbname or a SQLite file path"
	}
	return fmt.Sprintf("%s %q: %s: use %s", ErrBadURL, e.Typed, e.Problem, e.Use)
}

// Is makes a URLTypoError match ErrBadURL.
func (e *URLTypoError) Is(target error) bool { return target == ErrBadURL }

// Patterns of warehouse strings that lack a scheme but are plainly Postgres: a user (and
// password) before @host, or host:port.
var (
	userinfoNoScheme = regexp.MustCompile(`^[A-Za-z0-9._~%!$&'()*+,;=-]+(:[^@/?#]*)?@[A-Za-z0-9.\[\]:-]+(/|\?|$)`)
	hostPortNoScheme = regexp.MustCompile(`^[A-Za-z0-9.-]+:[0-9]{1,5}(/|\?|$)`)
)

// typo is a URLTypoError for a string that is almost a URL hrsync reads (see URLTypoError); nil
// for any other.
func typo(rawURL string) error {
	lower := strings.ToLower(rawURL)
	scheme := schemePrefix.FindString(rawURL)
	name := strings.ToLower(strings.TrimSuffix(scheme, ":"))
	after := rawURL[len(scheme):]
	switch {
	case scheme == "":
		for _, pg := range []string{"postgresql", "postgres"} {
			if strings.HasPrefix(lower, pg+"//") {
				return pgTypo(pg, rawURL[:len(pg)+2], rawURL[len(pg)+2:], `looks like a Postgres URL missing the ":" of "`+pg+`://"`)
			}
		}
	case name == "postgres" || name == "postgresql":
		if strings.HasPrefix(after, "//") { // POSTGRES://: backendOf takes lower case only
			return pgTypo(name, rawURL[:len(scheme)+2], after[2:], "looks like a Postgres URL with its scheme in capitals")
		}
		return pgTypo(name, rawURL[:len(scheme)+len(after)-len(strings.TrimPrefix(after, "/"))], strings.TrimPrefix(after, "/"),
			`looks like a Postgres URL missing "//" after "`+name+`:"`)
	case name == "file" || name == "sqlite": // SQLite forms, whatever follows
	case hostPortNoScheme.MatchString(rawURL):
		return pgTypo("postgres", "", rawURL, "looks like a Postgres host:port without its scheme")
	case userinfoNoScheme.MatchString(rawURL):
		return pgTypo("postgres", "", rawURL, "looks like a Postgres user@host without its scheme")
	case near(name, "postgres") || near(name, "postgresql") || name == "pg" || name == "pgsql" || name == "psql":
		rest, ok := strings.CutPrefix(after, "//")
		if !ok {
			rest = strings.TrimPrefix(after, "/")
		}
		return pgTypo("postgres", rawURL[:len(rawURL)-len(rest)], rest, fmt.Sprintf("%q is not a scheme hrsync reads (Postgres is postgres://)", name+":"))
	case name == "sqlite3" || near(name, "sqlite"):
		// A SQLite path is no secret: shown as it is.
		return &URLTypoError{Typed: rawURL, Problem: fmt.Sprintf("%q is not a scheme hrsync reads (SQLite is sqlite: or a plain file path)", name+":"), Use: "sqlite:" + after}
	}
	return nil
}

// pgTypo is the URLTypoError of a string typed as typedPrefix+rest meaning scheme://+rest (scheme
// postgres or postgresql): both shown with their passwords replaced, or neither when that is not
// read either.
func pgTypo(scheme, typedPrefix, rest, problem string) error {
	pg := scheme + "://"
	use := pg + rest
	if d, err := Classify(use); err != nil || d != schema.Postgres || rest == "" {
		return &URLTypoError{Problem: problem}
	}
	shown := RedactURL(use)
	redRest, ok := strings.CutPrefix(shown, pg)
	if !ok || redRest == "" || strings.HasPrefix(shown, pg+"…") {
		return &URLTypoError{Problem: problem}
	}
	return &URLTypoError{Typed: typedPrefix + redRest, Problem: problem, Use: shown}
}

// near reports whether a scheme is a likely misspelling of want: at most two edits away
// (Levenshtein), and not much shorter. A scheme is ASCII (schemePrefix), so bytes are runes.
func near(name, want string) bool {
	return name != want && len(name) >= len(want)-2 && levenshtein.ComputeDistance(name, want) <= 2
}

// keyValueForm matches libpq's connection strings: keyword = value pairs, the first at the start
// or any after a space (host=db password=…, dbname = hr).
var keyValueForm = regexp.MustCompile(`(?:^|\s)[A-Za-z_][A-Za-z0-9_]*\s*=`)

// schemePrefix matches a URL's scheme and its colon.
var schemePrefix = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// sqlitePath is the file of a SQLite form: a path, file:… or sqlite:…, without any query.
func sqlitePath(rawURL string) (string, error) {
	path := rawURL
	if scheme := schemePrefix.FindString(rawURL); scheme != "" {
		switch strings.ToLower(scheme) {
		case "file:", "sqlite:":
			path = strings.TrimPrefix(rawURL[len(scheme):], "//")
		default:
			return "", fmt.Errorf("%w: it starts with a URL scheme hrsync does not read; want postgres://… or postgresql://… for Postgres, "+
				"or a SQLite file path (./name for a file whose name has a colon)", ErrBadURL)
		}
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" || strings.Contains(path, "://") {
		return "", fmt.Errorf("%w: want postgres://… or a SQLite file path", ErrBadURL)
	}
	return path, nil
}

// isPasswordParam reports whether a query parameter of a Postgres URL holds a secret: password
// and sslpassword, and to be safe any name with password in it.
func isPasswordParam(name string) bool {
	return strings.Contains(strings.ToLower(name), "password")
}

// redactedMark stands for a password in printed URLs, as url.URL.Redacted writes it.
const redactedMark = "xxxxx"

// RedactURL is rawURL as it may be printed or logged: a Postgres URL with its password, and its
// password and sslpassword parameters, replaced by xxxxx (and no fragment); a SQLite path as it
// is; anything Classify refuses described without its text.
func RedactURL(rawURL string) string {
	return redact(rawURL, false)
}

// WithoutPassword is a Postgres URL with its password, and its password and sslpassword
// parameters, left out: what to hand to psql, which then asks for it. Other strings are as
// RedactURL gives them.
func WithoutPassword(rawURL string) string {
	return redact(rawURL, true)
}

func redact(rawURL string, drop bool) string {
	d, err := Classify(rawURL)
	switch {
	case err != nil:
		return "(a warehouse string hrsync does not read)"
	case d == schema.SQLite:
		return rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL[:strings.Index(rawURL, "://")+3] + "…"
	}
	if _, ok := u.User.Password(); ok {
		if drop {
			u.User = url.User(u.User.Username())
		} else {
			u.User = url.UserPassword(u.User.Username(), redactedMark)
		}
	}
	if u.RawQuery != "" {
		var kept []string
		for part := range strings.SplitSeq(u.RawQuery, "&") {
			key, _, _ := strings.Cut(part, "=")
			if k, err := url.QueryUnescape(key); err != nil || isPasswordParam(k) || isPasswordParam(key) {
				if drop {
					continue
				}
				part = key + "=" + redactedMark
			}
			kept = append(kept, part)
		}
		u.RawQuery = strings.Join(kept, "&")
	}
	u.Fragment, u.RawFragment = "", "" // means nothing to Postgres; may hold anything
	return u.String()
}

// secretsOf are the passwords a Postgres URL holds (its user's, its password and sslpassword
// parameters), in every spelling a message may quote them: as written and decoded.
func secretsOf(rawURL string) []string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s), url.UserPassword("", s).String()[1:])
		}
	}
	if p, ok := u.User.Password(); ok {
		add(p)
	}
	for k, vs := range u.Query() {
		if isPasswordParam(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
	return out
}

// scrub replaces every secret of rawURL in msg by xxxxx.
func scrub(msg, rawURL string) string {
	for _, s := range secretsOf(rawURL) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, redactedMark)
		}
	}
	return msg
}

// scrubbedError is an error whose message has the warehouse's passwords replaced; it still
// matches what it wraps (errors.Is, errors.As).
type scrubbedError struct {
	err    error
	rawURL string
}

func (e *scrubbedError) Error() string { return scrub(e.err.Error(), e.rawURL) }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrubbed wraps err so that its message holds none of rawURL's passwords; nil stays nil.
func scrubbed(err error, rawURL string) error {
	if err == nil || len(secretsOf(rawURL)) == 0 {
		return err
	}
	return &scrubbedError{err: err, rawURL: rawURL}
}
