package turn

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/wire"
)

func signed(chat, id, tool, input string) SignedCall {
	return SignedCall{Protocol: "p", Scope: "alice", ChatID: chat, ToolCallID: id, ToolName: tool, Input: json.RawMessage(input)}
}

func TestSigner(t *testing.T) {
	s := NewSigner([]byte("k"))
	now := time.Now()
	sig := s.Sign(signed("chat", "call", "tool", `{"b":1.0,"a":"x","n":12345678901234567890}`), now.Add(time.Hour))
	// A browser parses and re-serializes the input: keys may come back in
	// another order and numbers in their shortest form.
	for _, same := range []string{`{"a":"x","b":1,"n":12345678901234567890}`, `{ "n":12345678901234567890, "b" : 1, "a" : "x" }`, `{"a":"x","b":1e0,"n":12345678901234567890}`} {
		if _, _, err := s.Verify(sig, signed("chat", "call", "tool", same), now); err != nil {
			t.Errorf("%s: %v", same, err)
		}
	}
	other := func(mut func(*SignedCall)) SignedCall {
		c := signed("chat", "call", "tool", `{"a":"x","b":1,"n":12345678901234567890}`)
		mut(&c)
		return c
	}
	for name, c := range map[string]SignedCall{
		"other input":             other(func(c *SignedCall) { c.Input = json.RawMessage(`{"a":"y","b":1,"n":12345678901234567890}`) }),
		"a big integer rounded":   other(func(c *SignedCall) { c.Input = json.RawMessage(`{"a":"x","b":1,"n":12345678901234567000}`) }),
		"other call":              other(func(c *SignedCall) { c.ToolCallID = "call2" }),
		"other tool":              other(func(c *SignedCall) { c.ToolName = "tool2" }),
		"other chat":              other(func(c *SignedCall) { c.ChatID = "chat2" }),
		"other scope":             other(func(c *SignedCall) { c.Scope = "bob" }),
		"other protocol":          other(func(c *SignedCall) { c.Protocol = "q" }),
		"fields shifted together": other(func(c *SignedCall) { c.ChatID, c.ToolCallID = "cha", "tcall" }),
	} {
		if _, _, err := s.Verify(sig, c, now); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
	good := other(func(*SignedCall) {})
	for _, bad := range []string{"", "x", sig[:len(sig)-1], strings.ToUpper(sig[:4]) + sig[4:], "AAAA" + sig[4:]} {
		if bad == sig {
			continue
		}
		if _, _, err := s.Verify(bad, good, now); !errors.Is(err, ErrBadSignature) {
			t.Errorf("signature %q: %v", bad, err)
		}
	}
	if _, _, err := NewSigner([]byte("other")).Verify(sig, good, now); !errors.Is(err, ErrBadSignature) {
		t.Error("another key verifies")
	}
	if _, _, err := s.Verify(sig, good, now.Add(time.Hour)); !errors.Is(err, ErrExpiredSignature) {
		t.Errorf("an expired signature: %v", err)
	}
	// Two signatures of one request differ (each names its own request).
	n1, _, _ := s.Verify(sig, good, now)
	n2, _, _ := s.Verify(s.Sign(good, now.Add(time.Hour)), good, now)
	if n1 == "" || n1 == n2 {
		t.Errorf("nonces %q %q", n1, n2)
	}
	if string(wire.CanonicalJSON(json.RawMessage(`{not json`))) != `{not json` {
		t.Error("unparseable input must be used as it is")
	}
}

// FuzzSigner: a signature verifies for its own request and nothing else:
// not after any change to one byte of it, nor for another input.
func FuzzSigner(f *testing.F) {
	f.Add("chat", `{"path":"/tmp/x"}`, `{"path":"/etc/passwd"}`, 3, byte(1))
	f.Fuzz(func(t *testing.T, chat, input, other string, at int, flip byte) {
		s := NewSigner([]byte("fuzz"))
		now := time.Now()
		c := SignedCall{Protocol: "p", ChatID: chat, ToolCallID: "c", ToolName: "t", Input: json.RawMessage(input)}
		sig := s.Sign(c, now.Add(time.Minute))
		if _, _, err := s.Verify(sig, c, now); err != nil {
			t.Fatalf("own signature: %v", err)
		}
		if flip != 0 && len(sig) > 0 {
			b := []byte(sig)
			i := (at%len(b) + len(b)) % len(b)
			b[i] ^= flip
			if _, _, err := s.Verify(string(b), c, now); err == nil && string(b) != sig {
				// base64url's last character carries spare bits: a flip
				// there may decode to the same bytes.
				if i != len(b)-1 {
					t.Fatalf("a changed signature verifies: %q", b)
				}
			}
		}
		d := c
		d.Input = json.RawMessage(other)
		if string(wire.CanonicalJSON(d.Input)) != string(wire.CanonicalJSON(c.Input)) {
			if _, _, err := s.Verify(sig, d, now); err == nil {
				t.Fatalf("verifies for other input %q (signed %q)", other, input)
			}
		}
	})
}
