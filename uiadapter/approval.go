package uiadapter

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash"
	"sync"
)

// Signer signs the approval requests the server sends and verifies the
// signatures clients echo back, so that an approval the server never asked
// for is refused even when it keeps no history.
//
// A signature is HMAC-SHA256 over the chat id, the tool call id, the tool
// name and the tool input in canonical JSON (object keys sorted, numbers in
// their shortest form, as a JavaScript client re-serializes them).
type Signer struct {
	key  []byte
	pool sync.Pool
}

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

// Sign returns the signature of one approval request.
func (s *Signer) Sign(chatID, toolCallID, toolName string, input json.RawMessage) string {
	mac := s.pool.Get().(hash.Hash)
	defer s.pool.Put(mac)
	mac.Reset()
	var n [binary.MaxVarintLen64]byte
	for _, field := range [][]byte{[]byte(chatID), []byte(toolCallID), []byte(toolName), canonicalJSON(input)} {
		mac.Write(n[:binary.PutUvarint(n[:], uint64(len(field)))]) // length-prefixed: fields cannot run together
		mac.Write(field)
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Verify reports whether sig is the signature of this approval request.
func (s *Signer) Verify(sig, chatID, toolCallID, toolName string, input json.RawMessage) bool {
	if sig == "" {
		return false
	}
	want := s.Sign(chatID, toolCallID, toolName, input)
	return hmac.Equal([]byte(sig), []byte(want))
}

// canonicalJSON re-encodes JSON with sorted keys and numbers as float64,
// the form a browser produces after JSON.parse and JSON.stringify. Input
// that does not parse is used as it is.
func canonicalJSON(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}
