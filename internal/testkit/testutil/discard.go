package testutil

import "net/http"

// DiscardWriter is an http.ResponseWriter (with Flush) that throws the
// body away, for benchmarks of what writes responses.
type DiscardWriter struct {
	header  http.Header
	Status  int
	Written int64
	Flushes int64
}

// Header returns the response headers.
func (d *DiscardWriter) Header() http.Header {
	if d.header == nil {
		d.header = http.Header{}
	}
	return d.header
}

// Write counts and discards.
func (d *DiscardWriter) Write(b []byte) (int, error) { d.Written += int64(len(b)); return len(b), nil }

// WriteHeader records the status.
func (d *DiscardWriter) WriteHeader(status int) { d.Status = status }

// Flush counts.
func (d *DiscardWriter) Flush() { d.Flushes++ }
