package uiadapter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
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
	if string(canonicalJSON(json.RawMessage(`{not json`))) != `{not json` {
		t.Error("unparseable input must be used as it is")
	}
}

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":[1.50,2e2,-0,0.1],"a":null}`:                `{"a":null,"b":[1.5,200,0,0.1]}`,
		`{"big":-9007199254740993,"ok":9007199254740992}`: `{"big":-9007199254740993,"ok":9007199254740992}`,
		`{"s":"<&>\u2028"}`:                               `{"s":"\u003c\u0026\u003e\u2028"}`,
		`1e400`:                                           `1e400`,
		`"x" "y"`:                                         `"x" "y"`, // not one value: as it is
	} {
		if got := string(canonicalJSON(json.RawMessage(in))); got != want {
			t.Errorf("canonicalJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzCanonicalJSON: canonical JSON of valid JSON is valid JSON, means
// the same, and is a fixed point.
func FuzzCanonicalJSON(f *testing.F) {
	f.Add(`{"b":[1.50,2e2,-0],"a":{"z":true,"y":"\u00e9"}}`)
	f.Add(`12345678901234567890123`)
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		c := canonicalJSON(json.RawMessage(in))
		if !json.Valid(c) {
			t.Fatalf("canonicalJSON(%q) = %q is not JSON", in, c)
		}
		if again := canonicalJSON(c); string(again) != string(c) {
			t.Fatalf("not a fixed point: %q → %q → %q", in, c, again)
		}
	})
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
		if string(canonicalJSON(d.Input)) != string(canonicalJSON(c.Input)) {
			if _, _, err := s.Verify(sig, d, now); err == nil {
				t.Fatalf("verifies for other input %q (signed %q)", other, input)
			}
		}
	})
}

func TestMemoryReplayGuard(t *testing.T) {
	ctx := context.Background()
	g := NewMemoryReplayGuard(4)
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Minute), "a"); !ok {
		t.Fatal("first use refused")
	}
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Minute), "a"); ok {
		t.Fatal("second use accepted")
	}
	// Full: expired entries go, and only they; an answer that has not
	// expired is never forgotten, so a guard full of them refuses to
	// record another rather than let one be answered twice.
	for i, n := range []string{"b", "c", "d"} {
		_, _ = g.Use(ctx, "chat", now.Add(time.Duration(i+2)*time.Minute), n)
	}
	now = now.Add(90 * time.Second) // "a" expired
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "e"); !ok {
		t.Fatal("a new request refused when an expired one could go")
	}
	if ok, err := g.Use(ctx, "chat", now.Add(time.Hour), "f"); ok || !errors.Is(err, ErrReplayGuardFull) {
		t.Fatalf("full of unexpired answers: Use = %v, %v", ok, err)
	}
	for _, n := range []string{"b", "c", "d", "e"} {
		if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), n); ok {
			t.Fatalf("%s: a remembered request accepted again", n)
		}
	}
	now = now.Add(3 * time.Minute) // b, c and d expired
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "f"); !ok {
		t.Fatal("refused after answers expired")
	}
	if len(g.used) > 4 {
		t.Fatalf("%d remembered, bound 4", len(g.used))
	}
	// Several at once: all or none.
	g = NewMemoryReplayGuard(10)
	g.now = func() time.Time { return now }
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "x"); !ok {
		t.Fatal("first use refused")
	}
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "y", "x"); ok {
		t.Fatal("a batch holding a used nonce accepted")
	}
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "y"); !ok {
		t.Fatal("a refused batch spent its other nonce")
	}
}
