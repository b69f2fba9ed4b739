package uiadapter

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
)

// decode reads and decodes the request's body. It is apart from serve,
// and ServeHTTP small, so that the stack under the JSON decoder stays
// small: see vercelai's Decode.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request) (*request, error) {
	body, err := h.cfg.postBody(w, r)
	if err != nil {
		return nil, err
	}
	req := &request{h: h, r: r, who: caller{addr: h.cfg.clientAddr(r)}}
	if _, ok := h.proto.(wire.TailDecoder); ok && h.cfg.store != nil {
		req.body = body // for decodeAll, should the request be served without history
	}
	if req.turn, err = req.decodeTurn(body, req.body != nil); err != nil {
		return nil, err
	}
	return req, nil
}

// decodeAll decodes the whole of a request that was decoded for a
// handler that keeps the history (its last turn only), once it is to be
// served without: its client has no scope credential.
func (req *request) decodeAll() error {
	if req.body == nil {
		return nil
	}
	turn, err := req.decodeTurn(req.body, false)
	if err != nil {
		return err
	}
	req.turn, req.body = turn, nil
	return nil
}

// decodeTurn decodes and checks a request's turn: only its last message
// with tail (the protocol is a TailDecoder), else all of it.
func (req *request) decodeTurn(body []byte, tail bool) (*wire.Turn, error) {
	h, r := req.h, req.r
	var t *wire.Turn
	var err error
	if tail {
		t, err = h.proto.(wire.TailDecoder).DecodeTail(r, body)
	} else {
		t, err = h.proto.Decode(r, body)
	}
	if err == nil {
		err = turn.Check(t)
	}
	if err == nil {
		err = keyFromHeader(r, t)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// keyFromHeader names t by r's Idempotency-Key, when it has one. Out of
// line: decodeTurn's frame is under every decoder's.
//
//go:noinline
func keyFromHeader(r *http.Request, t *wire.Turn) error {
	k := r.Header.Get(edge.IdempotencyKeyHeader)
	if k == "" {
		return nil
	}
	t.Key = k
	return wire.CheckID(edge.IdempotencyKeyHeader, k)
}

// postBody checks that r is a POST of JSON (405, 415) and reads its body
// (413, 408, 400).
func (c *config) postBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Method != http.MethodPost {
		wire.CloseUnread(w, r)
		w.Header().Set("Allow", http.MethodPost)
		return nil, &wire.Error{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use POST"}
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		wire.CloseUnread(w, r)
		return nil, &wire.Error{Status: http.StatusUnsupportedMediaType, Message: "content type must be application/json"}
	}
	return c.readBody(w, r)
}

// readBody reads the body within the size limit (413) and the body
// timeout (408), then clears the read deadline: the server's watch for a
// client that hangs up reads the connection during the stream, and must
// not trip over it.
func (c *config) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	if c.bodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(c.bodyTimeout))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, c.maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		// Cleared whoever set it (this handler, or a server's edge that
		// bounds every body): a deadline left on the connection would cut
		// the stream.
		_ = rc.SetReadDeadline(time.Time{})
		return body, nil
	case errors.As(err, &tooBig):
		return nil, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "request body too large"}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The deadline stays: the server must not wait for the rest of
		// the body either, and closes the connection.
		w.Header().Set("Connection", "close")
		return nil, &wire.Error{Status: http.StatusRequestTimeout, Message: "the request body did not arrive in time"}
	}
	return nil, wire.BadRequest("could not read the request body")
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}
