package gemini

import (
	"io"
	"net/http"
)

// bodyTap hands the body of a successful streaming response to this
// package instead of to the SDK.
//
// The SDK reads each streamed chunk three times (JSON into a map, its
// converter over the map, the map through JSON again into its types):
// about 120 allocations per text delta. So the SDK builds, sends and
// retries the request and reads an error response, as for every call,
// but a call that asks for the body (a *tapped in the request's context)
// takes the body of a 2xx response and reads it itself (stream.go); the
// SDK gets an empty body, which it reads as a stream of no chunks.
type bodyTap struct{ next http.RoundTripper }

type tapKey struct{}

// tapped receives the body of a call's successful response.
type tapped struct{ body io.ReadCloser }

func (t bodyTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	slot, _ := req.Context().Value(tapKey{}).(*tapped)
	if err != nil || slot == nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	slot.body, resp.Body = resp.Body, http.NoBody
	return resp, nil
}

func (t *tapped) close() {
	if t.body != nil {
		t.body.Close()
	}
}
