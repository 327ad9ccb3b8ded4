package app

import (
	"io"
	"net/http"
)

// maxDrain bounds what is read of an answer's rest when it is closed early.
const maxDrain = 64 << 10

// drainBodies reads every GitHub answer to its end when it is closed (up to maxDrain bytes).
// go-github stops reading at the end of the JSON value, and on a chunked answer the
// transport may report the end of the body only on a later read; the HTTP cache keeps only
// answers read to that end. Without this, whether an answer is kept, and so revalidated with
// If-None-Match (a free 304) instead of read again (a charged 200), depends on how the bytes
// arrived.
func drainBodies(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if resp != nil && resp.Body != nil {
			resp.Body = &drainingBody{ReadCloser: resp.Body}
		}
		return resp, err
	})
}

// drainingBody reads the rest of a body before closing it.
type drainingBody struct{ io.ReadCloser }

// Close drains the body, up to maxDrain bytes, and closes it.
func (b *drainingBody) Close() error {
	_, _ = io.Copy(io.Discard, io.LimitReader(b.ReadCloser, maxDrain))
	return b.ReadCloser.Close()
}
