package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
)

// MinKeyBits is the least entropy, in bits, a key clients present must have.
const MinKeyBits = 128

// MinKeyLength is the least length of such a key whatever its characters: 22 base64
// characters (132 bits); 32 hex digits are 128.
const MinKeyLength = 22

// KeyHint is how a key strong enough is made.
const KeyHint = "make one with: openssl rand -hex 32"

// ErrWeakKey is the error of a key too easy to guess (CheckKey).
var ErrWeakKey = errors.New("key too weak")

// CheckKey validates a key as configured: its key or its SHA-256, exactly one; a SHA-256 of 64
// hex digits; a key of at least MinKeyBits bits (KeyBits; a key given by its SHA-256 cannot be
// judged). Its errors never hold the key; the caller names which key it is.
func CheckKey(k Key) error {
	switch {
	case k.Key == "" && k.SHA256 == "":
		return errors.New("empty API key (set Key or SHA256)")
	case k.Key != "" && k.SHA256 != "":
		return errors.New("set Key or SHA256, not both")
	case k.SHA256 != "":
		if b, err := hex.DecodeString(k.SHA256); err != nil || len(b) != sha256.Size {
			return errors.New("SHA256 is not 64 hex digits")
		}
		return nil
	}
	return CheckKeyStrength(k.Key)
}

// CheckKeyStrength refuses a key below MinKeyBits bits or MinKeyLength characters, with an
// error (wrapping ErrWeakKey) that says how to make one and never holds the key.
func CheckKeyStrength(key string) error {
	if n := len(key); n < MinKeyLength {
		return fmt.Errorf("%w: %d characters, at least %d are needed (%s)", ErrWeakKey, n, MinKeyLength, KeyHint)
	}
	if bits := KeyBits(key); bits < MinKeyBits {
		return fmt.Errorf("%w: about %d bits of entropy, at least %d are needed (%s)", ErrWeakKey, bits, MinKeyBits, KeyHint)
	}
	return nil
}

// maxRun is how many characters of a run of one repeated character count towards a key's
// entropy: a random key holds a run of four in one case of a few hundred, a typed one often.
const maxRun = 3

// KeyBits estimates a key's entropy as if its characters were drawn at random from the
// alphabet they come from: hex digits (16), base64's (64), or the classes present (digits,
// lower and upper case letters, other printable bytes: 10, 26, 26 and 33). Counted over the
// key's shortest repeating unit ("abcabc" counts as "abc"), a run of one character counting at
// most maxRun times; a key of fewer than 8 different characters counts 0.
func KeyBits(key string) int {
	if len(key) == 0 {
		return 0
	}
	distinct := map[byte]bool{}
	var digit, lower, upper, b64sym, other, hexLower, hexUpper bool
	for i := 0; i < len(key); i++ {
		c := key[i]
		distinct[c] = true
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
			hexLower = hexLower || c > 'f'
		case c >= 'A' && c <= 'Z':
			upper = true
			hexUpper = hexUpper || c > 'F'
		case c == '+' || c == '/' || c == '-' || c == '_' || c == '=':
			b64sym = true
		default:
			other = true
		}
	}
	if len(distinct) < 8 {
		return 0
	}
	var alphabet int
	switch {
	case !b64sym && !other && !lower && !upper:
		alphabet = 10 // digits
	case !b64sym && !other && !hexLower && !hexUpper && !(lower && upper):
		alphabet = 16 // hex digits, in one case
	case !other:
		if digit {
			alphabet += 10
		}
		if lower {
			alphabet += 26
		}
		if upper {
			alphabet += 26
		}
		if b64sym {
			alphabet += 2 // base64's two symbols (and its padding)
		}
	default:
		alphabet = 95 // printable ASCII, or any byte
	}
	unit := key[:period(key)]
	n, run := 0, 0
	for i := 0; i < len(unit); i++ {
		if i > 0 && unit[i] == unit[i-1] {
			run++
		} else {
			run = 1
		}
		if run <= maxRun {
			n++
		}
	}
	return int(float64(n) * math.Log2(float64(alphabet)))
}

// period is the length of s's shortest repeating unit: s is that prefix repeated (the last
// repetition perhaps cut short); len(s) when s repeats nothing.
func period(s string) int {
	for p := 1; p <= len(s)/2; p++ {
		if strings.HasPrefix(s, s[p:]) {
			return p
		}
	}
	return len(s)
}

// keyIdentity is the identity a key's stored state (its Idempotency-Keys) is kept under, stable
// whatever the order of the configuration: a configured name, else one derived from the key's
// SHA-256 (never the key, nor the SHA-256 itself, which configuration may give to authenticate).
func keyIdentity(named bool, name string, sum [sha256.Size]byte) string {
	if named {
		return name
	}
	d := sha256.Sum256(append([]byte("hrsync idempotency client\x00"), sum[:]...))
	return "sha256:" + hex.EncodeToString(d[:16])
}
