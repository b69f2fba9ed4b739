package turn

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash"
	"math"
	"sync"
	"time"

	"github.com/agentui/agentui/internal/wire"
)

// Signer signs the approval requests the server sends and verifies the
// signatures clients echo back, so that an approval the server never asked
// for is refused even when it keeps no history.
//
// A signature is a random nonce, an expiry and an HMAC-SHA256 over both
// and the approval request: the protocol, the scope (whose request it
// was), the chat, the tool call id, the tool name and the tool input in
// canonical JSON (object keys sorted, numbers as a JavaScript client
// writes them back, integers beyond 2^53 exactly). The nonce names one
// approval request, so a [ReplayGuard] can refuse a second answer to it.
type Signer struct {
	key  []byte
	pool sync.Pool
}

// SignedCall is what a signature covers.
type SignedCall struct {
	Protocol   string // the protocol's name: a signature from one endpoint is not valid on another
	Scope      string // "" when the handler has no scope function
	ChatID     string
	ToolCallID string
	ToolName   string
	Input      json.RawMessage
}

// Errors of [Signer.Verify].
var (
	ErrBadSignature     = errors.New("approval signature does not match the tool call")
	ErrExpiredSignature = errors.New("the approval request has expired")
)

const (
	signatureVersion = 2
	nonceSize        = 16
	signatureSize    = 1 + nonceSize + 8 + sha256.Size
)

// NewSigner returns a signer with key. Use the same key on every replica
// and across restarts, or approvals issued before a restart fail.
func NewSigner(key []byte) *Signer {
	s := &Signer{key: append([]byte(nil), key...)}
	s.pool.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

// RandomKey returns 32 random bytes, for a key that lives as long as the
// process.
func RandomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails on supported platforms
	return k
}

// Sign returns a signature for one approval request, valid until expires.
func (s *Signer) Sign(c SignedCall, expires time.Time) string {
	b := make([]byte, signatureSize)
	b[0] = signatureVersion
	_, _ = rand.Read(b[1 : 1+nonceSize])
	binary.BigEndian.PutUint64(b[1+nonceSize:], uint64(expires.UnixMilli()))
	s.mac(b[1+nonceSize+8:1+nonceSize+8], b[:1+nonceSize+8], c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Verify checks sig against the approval request as the client's request
// shows it. It returns the signature's nonce and expiry, for a
// [ReplayGuard]; ErrBadSignature when sig was not made for this request
// by this key, ErrExpiredSignature when it was but expired before now.
func (s *Signer) Verify(sig string, c SignedCall, now time.Time) (nonce string, expires time.Time, err error) {
	b, derr := base64.RawURLEncoding.DecodeString(sig)
	if derr != nil || len(b) != signatureSize || b[0] != signatureVersion {
		return "", time.Time{}, ErrBadSignature
	}
	head := b[:1+nonceSize+8]
	want := s.mac(make([]byte, 0, sha256.Size), head, c)
	if !hmac.Equal(want, b[len(head):]) {
		return "", time.Time{}, ErrBadSignature
	}
	ms := binary.BigEndian.Uint64(b[1+nonceSize:])
	expires = time.UnixMilli(int64(min(ms, math.MaxInt64)))
	if !now.Before(expires) {
		return "", expires, ErrExpiredSignature
	}
	return base64.RawURLEncoding.EncodeToString(b[1 : 1+nonceSize]), expires, nil
}

// mac appends the HMAC of head and the call to out.
func (s *Signer) mac(out, head []byte, c SignedCall) []byte {
	m := s.pool.Get().(hash.Hash)
	defer s.pool.Put(m)
	m.Reset()
	m.Write([]byte("agentui approval\x00"))
	m.Write(head)
	var n [binary.MaxVarintLen64]byte
	for _, field := range [][]byte{[]byte(c.Protocol), []byte(c.Scope), []byte(c.ChatID), []byte(c.ToolCallID), []byte(c.ToolName), wire.CanonicalJSON(c.Input)} {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(field)))]) // length-prefixed: fields cannot run together
		m.Write(field)
	}
	return m.Sum(out)
}

// Key is the secret the signer signs with: the handler derives its other
// keys (the sealing of provider values) from it, so one secret serves all.
func (s *Signer) Key() []byte { return s.key }
