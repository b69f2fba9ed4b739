package uiadapter

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
	for _, field := range [][]byte{[]byte(c.Protocol), []byte(c.Scope), []byte(c.ChatID), []byte(c.ToolCallID), []byte(c.ToolName), canonicalJSON(c.Input)} {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(field)))]) // length-prefixed: fields cannot run together
		m.Write(field)
	}
	return m.Sum(out)
}

// canonicalJSON re-encodes JSON with object keys sorted and numbers in the
// form a browser writes back after JSON.parse and JSON.stringify (the
// shortest form of the float64), except integers beyond 2^53, which a
// float64 cannot hold: they keep their exact digits, so two of them never
// sign alike (a JavaScript client that rounds one gets its approval
// refused, not another number run). Input that does not parse is used as
// it is.
func canonicalJSON(raw json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return raw
	}
	return appendCanonical(make([]byte, 0, len(raw)), v)
}

func appendCanonical(b []byte, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			kb, _ := json.Marshal(k)
			b = append(append(b, kb...), ':')
			b = appendCanonical(b, v[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	case json.Number:
		return appendNumber(b, string(v))
	}
	out, _ := json.Marshal(v) // strings, booleans, null
	return append(b, out...)
}

// maxExact is the largest integer every float64 between it and zero can
// hold.
const maxExact = 1 << 53

func appendNumber(b []byte, lit string) []byte {
	if !strings.ContainsAny(lit, ".eE") {
		digits := strings.TrimPrefix(lit, "-")
		if n, err := strconv.ParseUint(digits, 10, 64); err != nil || n > maxExact {
			digits = strings.TrimLeft(digits, "0")
			if lit[0] == '-' {
				return append(append(b, '-'), digits...)
			}
			return append(b, digits...)
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil { // beyond float64's range: keep it as written
		return append(b, lit...)
	}
	if f == 0 {
		return append(b, '0') // JSON.stringify(-0) is "0"
	}
	out, err := json.Marshal(f)
	if err != nil {
		return append(b, lit...)
	}
	return append(b, out...)
}

// ReplayGuard remembers which approval requests were answered, until
// they expire, so that a server keeping no history can refuse a second
// answer to one approval request: a replay, or a denial sent again as an
// approval. With a shared guard (history/redisstore.ReplayGuard) this holds
// across replicas; the default, in memory, holds within one process.
type ReplayGuard interface {
	// Use records that the approval requests named by nonces, all of one
	// chat, were answered: all of them, or none when one already was
	// (then it returns false), so that a request refused for one answer
	// does not spend the others. expires is when the last of them
	// expires, after which none need be remembered.
	Use(ctx context.Context, chat string, expires time.Time, nonces ...string) (bool, error)
}

// MemoryReplayGuard is a ReplayGuard in process memory, bounded in size.
// It never forgets an answer before its request expires, or a second
// answer could pass: when it is full of unexpired ones it refuses to
// record another ([ErrReplayGuardFull]), and the handler answers 503
// until some expire. Size it for the approvals answered within
// [WithApprovalTTL], or share a Redis one (history/redisstore), which
// expires each entry on its own.
type MemoryReplayGuard struct {
	mu   sync.Mutex
	max  int
	now  func() time.Time
	used map[string]time.Time
}

// ErrReplayGuardFull: the guard remembers as many unexpired answers as it
// may hold, and cannot take another without forgetting one that could
// then be replayed.
var ErrReplayGuardFull = errors.New("uiadapter: the approval replay guard is full")

// DefaultReplayGuardSize is how many answered approval requests a
// MemoryReplayGuard remembers (about 100 bytes each).
const DefaultReplayGuardSize = 100000

// NewMemoryReplayGuard returns a guard that remembers up to max answered
// approval requests (DefaultReplayGuardSize when max <= 0).
func NewMemoryReplayGuard(max int) *MemoryReplayGuard {
	if max <= 0 {
		max = DefaultReplayGuardSize
	}
	return &MemoryReplayGuard{max: max, now: time.Now, used: map[string]time.Time{}}
}

// Use records nonces as answered, all or none.
func (g *MemoryReplayGuard) Use(_ context.Context, _ string, expires time.Time, nonces ...string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	for _, n := range nonces {
		if until, ok := g.used[n]; ok && now.Before(until) {
			return false, nil
		}
	}
	if len(g.used)+len(nonces) > g.max {
		for n, until := range g.used {
			if !now.Before(until) {
				delete(g.used, n)
			}
		}
		if len(g.used)+len(nonces) > g.max {
			return false, ErrReplayGuardFull
		}
	}
	for _, n := range nonces {
		g.used[n] = expires
	}
	return true, nil
}
