package server

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
	"sync"
)

// MinCompressBytes is the smallest body compressed: below it gzip's framing costs more than it
// saves.
const MinCompressBytes = 1 << 10

// gzipLevel trades the CPU of a miss against bytes on the wire; an answer is compressed once per
// version when the cache is on.
const gzipLevel = gzip.DefaultCompression

// negotiate picks the content-coding of an answer from the request's Accept-Encoding (RFC 9110
// 12.5.3): "gzip" when gzip (or x-gzip, or *) is acceptable with a q-value at least identity's,
// else "" (identity). A missing or empty header gets identity. When nothing acceptable is left
// (identity;q=0 and no gzip) identity is sent anyway, as the RFC allows, rather than a 406.
func negotiate(header string) string {
	if header == "" {
		return ""
	}
	qGzip, qIdentity, qStar := -1.0, -1.0, -1.0
	for elem := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(elem, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q, ok := qvalue(params)
		if !ok || coding == "" {
			continue
		}
		switch coding {
		case "gzip", "x-gzip":
			qGzip = max(qGzip, q)
		case "identity":
			qIdentity = max(qIdentity, q)
		case "*":
			qStar = max(qStar, q)
		}
	}
	if qGzip < 0 {
		qGzip = max(qStar, 0)
	}
	if qIdentity < 0 {
		// identity is acceptable unless excluded, by itself or by *;q=0; not named, it is the
		// least preferred of what is acceptable.
		qIdentity = 0.0001
		if qStar >= 0 {
			qIdentity = qStar
		}
	}
	if qGzip > 0 && qGzip >= qIdentity {
		return "gzip"
	}
	return ""
}

// qvalue reads the q parameter of one Accept-Encoding element's parameters (";q=0.5"): 1 when
// absent; ok false when malformed, so the element is ignored.
func qvalue(params string) (float64, bool) {
	q := 1.0
	for p := range strings.SplitSeq(params, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name, val, found := strings.Cut(p, "=")
		if !found {
			return 0, false
		}
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue // an extension parameter: none is understood, none changes the choice
		}
		val = strings.TrimSpace(val)
		// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
		if len(val) == 0 || len(val) > 5 || (val[0] != '0' && val[0] != '1') {
			return 0, false
		}
		if len(val) > 1 && val[1] != '.' {
			return 0, false
		}
		for _, c := range []byte(val[min(2, len(val)):]) {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || v > 1 {
			return 0, false
		}
		q = v
	}
	return q, true
}

// codedTag is the strong ETag of tag's representation in coding: tag itself for identity,
// "…-gzip" for gzip, since two codings of one answer are different representations (RFC 9110
// 8.8.3).
func codedTag(tag, coding string) string {
	if coding == "" || len(tag) < 2 {
		return tag
	}
	return tag[:len(tag)-1] + "-" + coding + `"`
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return w
}}

// gzipBody compresses body into a new slice.
func gzipBody(body []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(body)/6 + 64)
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	gzipWriters.Put(zw)
	return buf.Bytes()
}
