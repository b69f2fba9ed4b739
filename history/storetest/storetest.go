// Package storetest is the contract every history.Store must keep. Store
// implementations run it from their tests:
//
//	storetest.Run(t, func(t *testing.T, ttl time.Duration) history.Store { … })
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
)

// NewStore makes an empty store whose conversations expire ttl after their
// last write (0: never), and a function that makes time pass for that
// expiry (a fake clock moved on, or every key's remaining TTL cut), so the
// contract checks expiry without sleeping.
type NewStore func(t *testing.T, ttl time.Duration) (history.Store, Elapse)

// Elapse makes d pass for a store's expiry.
type Elapse func(d time.Duration)

func msg(id, text string) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
	m.SetID(id)
	return m
}

func ids(c history.Conversation) []string {
	var out []string
	for i := range c.Messages {
		out = append(out, c.Messages[i].ID())
	}
	return out
}

func same(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// lockingStore is a store that is its own locker, for the lock contract.
func lockingStore(t *testing.T, s history.Store) interface {
	history.Store
	history.Locker
} {
	t.Helper()
	l, ok := s.(interface {
		history.Store
		history.Locker
	})
	if !ok {
		t.Fatalf("%T is not a history.Locker", s)
	}
	return l
}

// Run runs the contract against stores from newStore.
func Run(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	key := history.Key{Scope: "alice", Chat: "chat-1"}

	t.Run("load of a missing conversation", func(t *testing.T) {
		s, _ := newStore(t, 0)
		c, err := s.Load(ctx, key)
		if err != nil || c.Version != 0 || len(c.Messages) != 0 {
			t.Fatalf("Load = %+v, %v", c, err)
		}
	})

	t.Run("append and load", func(t *testing.T) {
		s, _ := newStore(t, 0)
		rich := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
			cmf.Thinking{Text: "hm", Opaque: &cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "sig"}},
			cmf.RedactedThinking{Opaque: cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "enc"}},
			cmf.ToolCall{ToolCallID: "c1", Name: "t", Arguments: json.RawMessage(`{"n":12345678901234567890}`)},
		}, Extensions: &cmf.Extensions{UI: &cmf.UIExtension{Calls: map[string]cmf.CallRecord{"c1": {ApprovalID: "a"}}}, Custom: map[string]json.RawMessage{"app.note": json.RawMessage(`{"k":[1,2]}`)}}}
		rich.SetID("m2")
		v, err := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "hello"), rich)
		if err != nil || v != 1 {
			t.Fatalf("Append = %d, %v", v, err)
		}
		v, err = s.Write(ctx, key, 1, history.KeepAll, msg("m3", "again"))
		if err != nil || v != 2 {
			t.Fatalf("second Append = %d, %v", v, err)
		}
		c, err := s.Load(ctx, key)
		if err != nil || c.Version != 2 || !same(ids(c), []string{"m1", "m2", "m3"}) {
			t.Fatalf("Load = %v %v, %v", c.Version, ids(c), err)
		}
		want, _ := json.Marshal(rich)
		got, _ := json.Marshal(c.Messages[1])
		if string(got) != string(want) {
			t.Fatalf("message changed in storage:\n got %s\nwant %s", got, want)
		}
		var size int64
		for i := range c.Messages {
			b, _ := json.Marshal(c.Messages[i])
			size += int64(len(b))
		}
		if c.Bytes != size {
			t.Fatalf("Bytes = %d, want the messages' JSON size %d", c.Bytes, size)
		}
		if _, err := s.Write(ctx, key, 2, 1); err != nil {
			t.Fatal(err)
		}
		one, _ := json.Marshal(msg("m1", "hello"))
		if c, _ := s.Load(ctx, key); c.Bytes != int64(len(one)) {
			t.Fatalf("after truncating to one message: Bytes = %d, want %d", c.Bytes, len(one))
		}
	})

	t.Run("loads between writes see every write", func(t *testing.T) {
		s, _ := newStore(t, 0)
		check := func(wantV history.Version, want ...string) {
			t.Helper()
			c, err := s.Load(ctx, key)
			if err != nil || c.Version != wantV || !same(ids(c), want) {
				t.Fatalf("Load = %d %v, %v; want %d %v", c.Version, ids(c), err, wantV, want)
			}
		}
		check(0)
		v, _ := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a"))
		check(v, "m1")
		check(v, "m1")
		v, _ = s.Write(ctx, key, v, history.KeepAll, msg("m2", "b"), msg("m3", "c"))
		check(v, "m1", "m2", "m3")
		v, _ = s.Write(ctx, key, v, 1)
		check(v, "m1")
		v, _ = s.Write(ctx, key, v, history.KeepAll, msg("m4", "d"))
		check(v, "m1", "m4")
		_, _ = s.Write(ctx, key, v-1, history.KeepAll, msg("lost", "x")) // conflict: changes nothing
		check(v, "m1", "m4")
		_ = s.Delete(ctx, key)
		check(0)
		v, _ = s.Write(ctx, key, 0, history.KeepAll, msg("m5", "e"))
		check(v, "m5")
	})

	t.Run("appends are copied, loads stay as they were", func(t *testing.T) {
		s, _ := newStore(t, 0)
		in := msg("m1", "hello")
		in.Extensions.Custom = map[string]json.RawMessage{"k": json.RawMessage(`1`)}
		v, err := s.Write(ctx, key, 0, history.KeepAll, in, msg("m2", "b"), msg("m3", "c"))
		if err != nil {
			t.Fatal(err)
		}
		in.Content[0] = cmf.Text{Text: "changed after Append"}
		in.Extensions.Custom["k"] = json.RawMessage(`2`)
		c, err := s.Load(ctx, key)
		if err != nil || len(c.Messages) != 3 {
			t.Fatalf("Load = %+v, %v", c, err)
		}
		if got := c.Messages[0].Content[0].(cmf.Text).Text; got != "hello" {
			t.Fatalf("stored text = %q", got)
		}
		if got := string(c.Messages[0].Extensions.Custom["k"]); got != "1" {
			t.Fatalf("stored extension = %s", got)
		}
		// Loaded messages are shared (read-only), but the slice is the
		// caller's to append to, and later writes never show through it:
		// a load keeps seeing the conversation as it was.
		_ = append(c.Messages, msg("mine", "x"))
		if v, err = s.Write(ctx, key, v, 1); err != nil {
			t.Fatal(err)
		}
		if _, err = s.Write(ctx, key, v, history.KeepAll, msg("n2", "new"), msg("n3", "newer")); err != nil {
			t.Fatal(err)
		}
		if got := ids(c); !same(got, []string{"m1", "m2", "m3"}) {
			t.Fatalf("an earlier load now holds %v", got)
		}
		if got := c.Messages[2].Content[0].(cmf.Text).Text; got != "c" {
			t.Fatalf("an earlier load's message now says %q", got)
		}
		if c2, _ := s.Load(ctx, key); !same(ids(c2), []string{"m1", "n2", "n3"}) {
			t.Fatalf("Load after the writes = %v", ids(c2))
		}
	})

	t.Run("invalid messages are refused", func(t *testing.T) {
		s, _ := newStore(t, 0)
		v, err := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "ok"))
		if err != nil {
			t.Fatal(err)
		}
		bad := msg("m2", "x")
		bad.Content = append(bad.Content, cmf.ToolCall{Name: "t", Arguments: json.RawMessage(`{}`)}) // no call id
		var invalid *cmf.ValidationError
		if _, err := s.Write(ctx, key, v, history.KeepAll, msg("m3", "fine"), bad); !errors.As(err, &invalid) {
			t.Fatalf("Append of an invalid message = %v, want a *cmf.ValidationError", err)
		}
		if c, _ := s.Load(ctx, key); c.Version != v || !same(ids(c), []string{"m1"}) {
			t.Fatalf("after a refused Append: version %d, %v", c.Version, ids(c))
		}
	})

	t.Run("conflict", func(t *testing.T) {
		s, _ := newStore(t, 0)
		if _, err := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a")); err != nil {
			t.Fatal(err)
		}
		for _, expect := range []history.Version{0, 2, 7} {
			if _, err := s.Write(ctx, key, expect, history.KeepAll, msg("x", "x")); !errors.Is(err, history.ErrConflict) {
				t.Fatalf("Append(expect %d) = %v, want ErrConflict", expect, err)
			}
		}
		if _, err := s.Write(ctx, history.Key{Scope: "alice", Chat: "new"}, 3, history.KeepAll, msg("x", "x")); !errors.Is(err, history.ErrConflict) {
			t.Fatalf("Append to a missing conversation with expect 3 = %v", err)
		}
		c, _ := s.Load(ctx, key)
		if c.Version != 1 || len(c.Messages) != 1 {
			t.Fatalf("a refused write changed the conversation: %+v", c)
		}
	})

	t.Run("truncate", func(t *testing.T) {
		s, _ := newStore(t, 0)
		v, _ := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a"), msg("m2", "b"), msg("m3", "c"))
		if _, err := s.Write(ctx, key, v+1, 1); !errors.Is(err, history.ErrConflict) {
			t.Fatalf("Truncate with a stale version = %v", err)
		}
		v, err := s.Write(ctx, key, v, 2)
		if err != nil || v != 2 {
			t.Fatalf("Truncate = %d, %v", v, err)
		}
		c, _ := s.Load(ctx, key)
		if !same(ids(c), []string{"m1", "m2"}) || c.Version != 2 {
			t.Fatalf("after Truncate: %v %d", ids(c), c.Version)
		}
		v, err = s.Write(ctx, key, v, 0)
		if err != nil {
			t.Fatal(err)
		}
		c, _ = s.Load(ctx, key)
		if len(c.Messages) != 0 || c.Version != v || v == 0 {
			t.Fatalf("after Truncate to 0: %+v", c)
		}
		if _, err := s.Write(ctx, key, v, history.KeepAll, msg("m4", "d")); err != nil {
			t.Fatalf("Append after Truncate: %v", err)
		}
		if _, err := s.Write(ctx, history.Key{Scope: "x", Chat: "missing"}, 1, 0); !errors.Is(err, history.ErrConflict) {
			t.Fatalf("Truncate of a missing conversation = %v", err)
		}
	})

	t.Run("write cuts and adds at once", func(t *testing.T) {
		s, _ := newStore(t, 0)
		v, _ := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "first"), msg("m2", "b"), msg("m3", "c"))
		// An edit of the first message: everything goes, the new one comes,
		// in one version.
		v2, err := s.Write(ctx, key, v, 0, msg("m1", "edited"), msg("m4", "d"))
		if err != nil || v2 != v+1 {
			t.Fatalf("Write = %d, %v", v2, err)
		}
		c, _ := s.Load(ctx, key)
		if !same(ids(c), []string{"m1", "m4"}) || c.Messages[0].Text() != "edited" || c.Version != v2 {
			t.Fatalf("after the write: %v %d", ids(c), c.Version)
		}
		// The derived title follows the message that replaced its own.
		infos, _ := s.List(ctx, key.Scope, 0)
		if len(infos) != 1 || infos[0].Title != "edited" {
			t.Fatalf("title after the write: %+v", infos)
		}
		// A refused write (stale version) cuts nothing.
		if _, err := s.Write(ctx, key, v, 0); !errors.Is(err, history.ErrConflict) {
			t.Fatalf("stale write = %v", err)
		}
		// keep beyond what is stored is an error, and changes nothing.
		if _, err := s.Write(ctx, key, v2, 3, msg("m5", "e")); err == nil || errors.Is(err, history.ErrConflict) {
			t.Fatalf("Write keeping 3 of 2 = %v, want an error that is not a conflict", err)
		}
		if c, _ := s.Load(ctx, key); c.Version != v2 || len(c.Messages) != 2 {
			t.Fatalf("a refused write changed the conversation: %v %d", ids(c), c.Version)
		}
	})

	t.Run("a refused write creates no conversation", func(t *testing.T) {
		s, _ := newStore(t, 0)
		invalid := msg("m2", "x")
		invalid.Content = append(invalid.Content, cmf.ToolCall{Name: "t", Arguments: json.RawMessage(`{}`)}) // no call id
		for what, write := range map[string]func() error{
			"a stale version": func() error {
				_, err := s.Write(ctx, key, 3, history.KeepAll, msg("m1", "a"))
				return err
			},
			"keep beyond what is stored": func() error {
				_, err := s.Write(ctx, key, 0, 1, msg("m1", "a"))
				return err
			},
			"an invalid message": func() error {
				_, err := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a"), invalid)
				return err
			},
		} {
			if err := write(); err == nil {
				t.Fatalf("a write with %s to a missing conversation was accepted", what)
			}
			if infos, err := s.List(ctx, key.Scope, 0); err != nil || len(infos) != 0 {
				t.Fatalf("after a write with %s: List = %+v, %v", what, infos, err)
			}
			if c, err := s.Load(ctx, key); err != nil || c.Version != 0 || len(c.Messages) != 0 {
				t.Fatalf("after a write with %s: Load = %+v, %v", what, c, err)
			}
			if err := s.Rename(ctx, key, "t"); !errors.Is(err, history.ErrNotFound) {
				t.Fatalf("after a write with %s: Rename = %v, want ErrNotFound", what, err)
			}
		}
		// The conversation is still new: a write that expects it so creates it.
		if v, err := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a")); err != nil || v != 1 {
			t.Fatalf("the first write after the refused ones = %d, %v", v, err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		s, _ := newStore(t, 0)
		_, _ = s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a"))
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if c, _ := s.Load(ctx, key); c.Version != 0 || len(c.Messages) != 0 {
			t.Fatalf("after Delete: %+v", c)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, history.ErrNotFound) {
			t.Fatalf("deleting twice = %v, want ErrNotFound", err)
		}
	})

	t.Run("titles", func(t *testing.T) {
		s, elapse := newStore(t, time.Minute)
		info := func(k history.Key) history.ChatInfo {
			t.Helper()
			chats, err := s.List(ctx, k.Scope, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chats {
				if c.Chat == k.Chat {
					return c
				}
			}
			t.Fatalf("%+v is not listed: %+v", k, chats)
			return history.ChatInfo{}
		}
		hello := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Text{Text: "Hello! Ask me anything."}}}
		hello.SetID("m0")
		v, err := s.Write(ctx, key, 0, history.KeepAll, hello)
		if err != nil {
			t.Fatal(err)
		}
		if c := info(key); c.Title != "" || c.Messages != 1 || c.Created.IsZero() || c.Updated.Before(c.Created) {
			t.Fatalf("with no user message: %+v", c)
		}
		if v, err = s.Write(ctx, key, v, history.KeepAll, msg("m1", "  What is\n the  weather? "), msg("m2", "and tomorrow?")); err != nil {
			t.Fatal(err)
		}
		if c := info(key); c.Title != "What is the weather?" || c.Messages != 3 {
			t.Fatalf("derived: %+v", c)
		}
		if err := s.Rename(ctx, key, "Weather\tplans"); err != nil {
			t.Fatal(err)
		}
		if c := info(key); c.Title != "Weather plans" || c.Messages != 3 {
			t.Fatalf("renamed: %+v", c)
		}
		if c, _ := s.Load(ctx, key); c.Version != v {
			t.Fatalf("Rename moved the version: %d, want %d", c.Version, v)
		}
		if err := s.Rename(ctx, key, ""); err != nil {
			t.Fatal(err)
		}
		if c := info(key); c.Title != "What is the weather?" {
			t.Fatalf("renamed back to derived: %+v", c)
		}
		// Editing the first question: its title goes with it, and the
		// edited one names the chat.
		if v, err = s.Write(ctx, key, v, 1); err != nil {
			t.Fatal(err)
		}
		if c := info(key); c.Title != "" || c.Messages != 1 {
			t.Fatalf("after truncating the titled message: %+v", c)
		}
		if _, err = s.Write(ctx, key, v, history.KeepAll, msg("m1b", "Rain in Oslo?")); err != nil {
			t.Fatal(err)
		}
		if c := info(key); c.Title != "Rain in Oslo?" {
			t.Fatalf("after the edit: %+v", c)
		}
		if err := s.Rename(ctx, history.Key{Scope: key.Scope, Chat: "missing"}, "x"); !errors.Is(err, history.ErrNotFound) {
			t.Fatalf("Rename of a missing conversation = %v", err)
		}
		if err := s.Rename(ctx, history.Key{Scope: "bob", Chat: key.Chat}, "x"); !errors.Is(err, history.ErrNotFound) {
			t.Fatalf("Rename under another scope = %v", err)
		}
		// A title does not outlive its conversation: deleted, or expired.
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		for _, end := range []func(){
			func() {
				if err := s.Delete(ctx, key); err != nil {
					t.Fatal(err)
				}
			},
			func() {
				elapse(2 * time.Minute)
				deadline := time.Now().Add(5 * time.Second)
				for c, _ := s.Load(ctx, key); c.Version != 0; c, _ = s.Load(ctx, key) {
					if time.Now().After(deadline) {
						t.Fatal("the conversation did not expire")
					}
					time.Sleep(time.Millisecond) // a store may take a moment to drop what expired
				}
			},
		} {
			// No user message: Rename writes the only title there is.
			if _, err := s.Write(ctx, key, 0, history.KeepAll, hello); err != nil {
				t.Fatal(err)
			}
			if err := s.Rename(ctx, key, "Renamed"); err != nil {
				t.Fatal(err)
			}
			end()
			if _, err := s.Write(ctx, key, 0, history.KeepAll, hello); err != nil {
				t.Fatal(err)
			}
			if c := info(key); c.Title != "" || c.Messages != 1 {
				t.Fatalf("a new conversation under the old id inherited: %+v", c)
			}
			if err := s.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("scopes and ids do not collide", func(t *testing.T) {
		s, _ := newStore(t, 0)
		keys := []history.Key{
			{Scope: "alice", Chat: "c"}, {Scope: "bob", Chat: "c"},
			{Scope: "a:b", Chat: "c"}, {Scope: "a", Chat: "b:c"},
			{Scope: "{x}", Chat: "y"}, {Scope: "x", Chat: "}y{"}, {Scope: "%3A", Chat: ""}, {Scope: ":", Chat: ""},
		}
		for i, k := range keys {
			if _, err := s.Write(ctx, k, 0, history.KeepAll, msg(fmt.Sprint(i), "x")); err != nil {
				t.Fatalf("%+v: %v", k, err)
			}
		}
		for i, k := range keys {
			c, _ := s.Load(ctx, k)
			if c.Version != 1 || !same(ids(c), []string{fmt.Sprint(i)}) {
				t.Fatalf("%+v holds %v (version %d)", k, ids(c), c.Version)
			}
		}
	})

	t.Run("ttl", func(t *testing.T) {
		s, elapse := newStore(t, time.Minute)
		v, err := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a"))
		if err != nil {
			t.Fatal(err)
		}
		elapse(40 * time.Second)
		if _, err := s.Write(ctx, key, v, history.KeepAll, msg("m2", "b")); err != nil { // refreshes the TTL
			t.Fatal(err)
		}
		elapse(40 * time.Second) // 80 s after the first write, 40 after the last
		if c, _ := s.Load(ctx, key); len(c.Messages) != 2 {
			t.Fatalf("the TTL was not refreshed by the last write: %+v", c)
		}
		elapse(30 * time.Second) // 70 s after the last write
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, err := s.Load(ctx, key)
			if err == nil && c.Version == 0 && len(c.Messages) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the conversation did not expire: %+v, %v", c, err)
			}
			time.Sleep(time.Millisecond) // a store may take a moment to drop what expired
		}
	})

	t.Run("list", func(t *testing.T) {
		s, elapse := newStore(t, time.Minute)
		write := func(scope, chat string) {
			t.Helper()
			k := history.Key{Scope: scope, Chat: chat}
			c, err := s.Load(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(ctx, k, c.Version, history.KeepAll, msg(chat+"-"+fmt.Sprint(c.Version), "x")); err != nil {
				t.Fatal(err)
			}
			// Later writes get later times: wait for the clock's next
			// millisecond (a condition, not a delay).
			for now := time.Now().UnixMilli(); time.Now().UnixMilli() == now; {
			}
			elapse(time.Millisecond)
		}
		list := func(scope string, limit int) []string {
			t.Helper()
			chats, err := s.List(ctx, scope, limit)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for i, c := range chats {
				if c.Updated.IsZero() || i > 0 && c.Updated.After(chats[i-1].Updated) {
					t.Fatalf("List(%q) is not newest first: %+v", scope, chats)
				}
				out = append(out, c.Chat)
			}
			return out
		}
		if got := list("nobody", 0); len(got) != 0 {
			t.Fatalf("List of an empty scope = %v", got)
		}
		write("alice", "a")
		write("alice", "b:with{odd}chars")
		write("bob", "c")
		write("alice", "d")
		write("alice", "a") // a is now the most recent
		if got := list("alice", 0); !same(got, []string{"a", "d", "b:with{odd}chars"}) {
			t.Fatalf("List(alice) = %v", got)
		}
		if got := list("alice", 2); !same(got, []string{"a", "d"}) {
			t.Fatalf("List(alice, 2) = %v", got)
		}
		if got := list("bob", 0); !same(got, []string{"c"}) {
			t.Fatalf("List(bob) = %v", got)
		}
		if err := s.Delete(ctx, history.Key{Scope: "alice", Chat: "d"}); err != nil {
			t.Fatal(err)
		}
		if got := list("alice", 2); !same(got, []string{"a", "b:with{odd}chars"}) {
			t.Fatalf("after deleting d: List(alice, 2) = %v", got)
		}
		// Expired conversations are not listed.
		write("alice", "b:with{odd}chars")
		elapse(59 * time.Second) // a is now 59 s old, b just under
		write("alice", "a")
		elapse(30 * time.Second) // b expired; a has 30 s left
		deadline := time.Now().Add(5 * time.Second)
		for got := list("alice", 0); !same(got, []string{"a"}); got = list("alice", 0) {
			if time.Now().After(deadline) {
				t.Fatalf("after b expired: List(alice) = %v", got)
			}
			time.Sleep(time.Millisecond) // a store may take a moment to drop what expired
		}
	})

	t.Run("50 concurrent appends lose nothing", func(t *testing.T) {
		s, _ := newStore(t, 0)
		const writers = 50
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					c, err := s.Load(ctx, key)
					if err != nil {
						errs <- err
						return
					}
					_, err = s.Write(ctx, key, c.Version, history.KeepAll, msg(fmt.Sprintf("w%d", w), "x"))
					if errors.Is(err, history.ErrConflict) {
						continue // another writer won this version: reload and retry
					}
					if err != nil {
						errs <- err
					}
					return
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		c, err := s.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, id := range ids(c) {
			if seen[id] {
				t.Fatalf("message %s stored twice", id)
			}
			seen[id] = true
		}
		if len(seen) != writers || c.Version != writers {
			t.Fatalf("%d distinct messages at version %d, want %d", len(seen), c.Version, writers)
		}
	})

	t.Run("acquire and load", func(t *testing.T) {
		st, _ := newStore(t, 0)
		s := lockingStore(t, st)
		v, _ := s.Write(ctx, key, 0, history.KeepAll, msg("m1", "a"))
		c, err := history.AcquireLoad(ctx, s, s, key, "run-a", time.Minute)
		if err != nil || c.Version != v || !same(ids(c), []string{"m1"}) {
			t.Fatalf("AcquireLoad = %d %v, %v", c.Version, ids(c), err)
		}
		if _, err := history.AcquireLoad(ctx, s, s, key, "run-b", time.Minute); !errors.Is(err, history.ErrBusy) {
			t.Fatalf("second AcquireLoad = %v, want ErrBusy", err)
		}
		if err := s.Acquire(ctx, key, "run-b", time.Minute); !errors.Is(err, history.ErrBusy) {
			t.Fatal("a busy AcquireLoad released the holder's lock")
		}
		v, _ = s.Write(ctx, key, v, history.KeepAll, msg("m2", "b"))
		if c, err := history.AcquireLoad(ctx, s, s, key, "run-a", time.Minute); err != nil || c.Version != v || !same(ids(c), []string{"m1", "m2"}) {
			t.Fatalf("the holder's AcquireLoad = %d %v, %v", c.Version, ids(c), err)
		}
		if err := s.Release(ctx, key, "run-a"); err != nil {
			t.Fatal(err)
		}
		missing := history.Key{Scope: "alice", Chat: "missing"}
		if c, err := history.AcquireLoad(ctx, s, s, missing, "run-b", time.Minute); err != nil || c.Version != 0 || len(c.Messages) != 0 {
			t.Fatalf("AcquireLoad of a missing conversation = %+v, %v", c, err)
		}
		if err := s.Acquire(ctx, missing, "run-c", time.Minute); !errors.Is(err, history.ErrBusy) {
			t.Fatal("AcquireLoad of a missing conversation did not lock it")
		}
	})

	t.Run("run lock", func(t *testing.T) {
		st, elapse := newStore(t, 0)
		s := lockingStore(t, st)
		if err := s.Acquire(ctx, key, "run-a", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, key, "run-b", time.Minute); !errors.Is(err, history.ErrBusy) {
			t.Fatalf("second Acquire = %v, want ErrBusy", err)
		}
		if err := s.Acquire(ctx, key, "run-a", time.Minute); err != nil {
			t.Fatalf("the holder cannot extend its lock: %v", err)
		}
		if err := s.Acquire(ctx, history.Key{Scope: "alice", Chat: "other"}, "run-b", time.Minute); err != nil {
			t.Fatalf("a lock on another chat blocked: %v", err)
		}
		_ = s.Release(ctx, key, "run-b") // not the holder: no effect
		if err := s.Acquire(ctx, key, "run-b", time.Minute); !errors.Is(err, history.ErrBusy) {
			t.Fatal("a non-holder released the lock")
		}
		if err := s.Release(ctx, key, "run-a"); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, key, "run-b", time.Minute); err != nil {
			t.Fatalf("after Release: %v", err)
		}
		elapse(59 * time.Second)
		if err := s.Acquire(ctx, key, "run-c", time.Minute); !errors.Is(err, history.ErrBusy) {
			t.Fatalf("a lock with a second left = %v, want ErrBusy", err)
		}
		elapse(2 * time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for err := s.Acquire(ctx, key, "run-c", time.Minute); err != nil; err = s.Acquire(ctx, key, "run-c", time.Minute) {
			if time.Now().After(deadline) {
				t.Fatalf("an expired lock still blocks: %v", err)
			}
			time.Sleep(time.Millisecond) // a store may take a moment to drop what expired
		}
	})

	t.Run("ledger", func(t *testing.T) {
		st, _ := newStore(t, time.Hour)
		l, ok := st.(history.Ledger)
		if !ok {
			t.Skipf("%T keeps no ledger", st)
		}
		if _, err := st.Write(ctx, key, 0, history.KeepAll, msg("m1", "hello")); err != nil {
			t.Fatal(err)
		}
		started := history.CallRecord{Tool: "delete_file", Started: time.UnixMilli(1700000000000).UTC()}
		if had, found, err := l.BeginCall(ctx, key, "c1", started); err != nil || found {
			t.Fatalf("the first BeginCall = %+v, %v, %v; want it recorded", had, found, err)
		}
		// A second attempt (a retry, another replica) finds it started.
		if had, found, err := l.BeginCall(ctx, key, "c1", history.CallRecord{Tool: "delete_file", Started: time.Now()}); err != nil || !found || had.Finished || !had.Started.Equal(started.Started) {
			t.Fatalf("the second BeginCall = %+v, %v, %v; want the first's record", had, found, err)
		}
		done := started
		done.Output, done.IsError = json.RawMessage(`{"deleted":"/tmp/x"}`), false
		if err := l.FinishCall(ctx, key, "c1", done); err != nil {
			t.Fatal(err)
		}
		had, found, err := l.BeginCall(ctx, key, "c1", started)
		if err != nil || !found || !had.Finished || string(had.Output) != `{"deleted":"/tmp/x"}` {
			t.Fatalf("BeginCall of a finished call = %+v, %v, %v; want its result", had, found, err)
		}
		failed := history.CallRecord{Tool: "t", Started: started.Started, Output: json.RawMessage(`"boom"`), IsError: true}
		if _, _, err := l.BeginCall(ctx, key, "c2", failed); err != nil {
			t.Fatal(err)
		}
		if err := l.FinishCall(ctx, key, "c2", failed); err != nil {
			t.Fatal(err)
		}
		calls, err := l.Calls(ctx, key)
		if err != nil || len(calls) != 2 || !calls["c1"].Finished || !calls["c2"].IsError || calls["c2"].Tool != "t" {
			t.Fatalf("Calls = %+v, %v", calls, err)
		}
		// Another chat's ledger is its own.
		if calls, err := l.Calls(ctx, history.Key{Scope: "bob", Chat: key.Chat}); err != nil || len(calls) != 0 {
			t.Fatalf("another scope's Calls = %+v, %v", calls, err)
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if calls, err := l.Calls(ctx, key); err != nil || len(calls) != 0 {
			t.Fatalf("Calls after the chat was deleted = %+v, %v", calls, err)
		}
	})

	t.Run("queue", func(t *testing.T) {
		st, _ := newStore(t, 0)
		q, ok := st.(history.Queue)
		if !ok {
			t.Skipf("%T keeps no queue", st)
		}
		queued := func(id string) history.Queued {
			return history.Queued{Message: msg(id, "later "+id), RunID: "run-" + id, Model: "m", At: time.UnixMilli(1700000000000).UTC()}
		}
		order := func() []string {
			t.Helper()
			qs, err := q.Queued(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range qs {
				out = append(out, e.ID())
			}
			return out
		}
		if got := order(); len(got) != 0 {
			t.Fatalf("a new chat's queue: %v", got)
		}
		for i, id := range []string{"q1", "q2", "q3"} {
			if at, err := q.Enqueue(ctx, key, queued(id), 3); err != nil || at != i+1 {
				t.Fatalf("Enqueue(%s) = %d, %v; want place %d", id, at, err, i+1)
			}
		}
		if at, err := q.Enqueue(ctx, key, queued("q2"), 3); err != nil || at != 2 {
			t.Fatalf("a retried Enqueue = %d, %v; want its place, 2, and nothing added", at, err)
		}
		if _, err := q.Enqueue(ctx, key, queued("q4"), 3); !errors.Is(err, history.ErrQueueFull) {
			t.Fatalf("Enqueue past max = %v, want ErrQueueFull", err)
		}
		qs, err := q.Queued(ctx, key)
		if err != nil || len(qs) != 3 {
			t.Fatalf("Queued = %v, %v", qs, err)
		}
		want, _ := json.Marshal(queued("q1"))
		if got, _ := json.Marshal(qs[0]); string(got) != string(want) {
			t.Fatalf("a queued message changed in storage:\n got %s\nwant %s", got, want)
		}
		if gone, err := q.Dequeue(ctx, key, "q2"); err != nil || !gone {
			t.Fatalf("Dequeue(q2) = %v, %v", gone, err)
		}
		if gone, err := q.Dequeue(ctx, key, "q2"); err != nil || gone {
			t.Fatalf("Dequeue(q2) again = %v, %v; want false", gone, err)
		}
		if got := order(); !same(got, []string{"q1", "q3"}) {
			t.Fatalf("after Dequeue(q2): %v", got)
		}
		other := history.Key{Scope: "bob", Chat: key.Chat}
		if qs, err := q.Queued(ctx, other); err != nil || len(qs) != 0 {
			t.Fatalf("another scope's chat of the same id shares the queue: %v, %v", qs, err)
		}
		if _, err := st.Write(ctx, key, 0, history.KeepAll, msg("m1", "hi")); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if got := order(); len(got) != 0 {
			t.Fatalf("a deleted chat's queue: %v", got)
		}
	})

	t.Run("branches", func(t *testing.T) {
		st, elapse := newStore(t, time.Minute)
		b, ok := st.(history.Brancher)
		if !ok {
			t.Skipf("%T keeps no branches", st)
		}
		reply := func(id, text string) cmf.Message {
			m := msg(id, text)
			m.Role = cmf.RoleAssistant
			return m
		}
		// branches lists the off-branch messages as id<parent.
		branches := func() []string {
			t.Helper()
			ns, err := b.Branches(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, n := range ns.Nodes {
				out = append(out, n.Message.ID()+"<"+n.Parent)
			}
			return out
		}
		load := func(want ...string) history.Conversation {
			t.Helper()
			c, err := st.Load(ctx, key)
			if err != nil || !same(ids(c), want) {
				t.Fatalf("active branch %v, %v; want %v", ids(c), err, want)
			}
			return c
		}
		v, err := st.Write(ctx, key, 0, history.KeepAll, msg("u1", "hi"), reply("a1", "hello"), msg("u2", "more"), reply("a2", "sure"))
		if err != nil {
			t.Fatal(err)
		}
		if got := branches(); len(got) != 0 {
			t.Fatalf("a conversation that was never cut has branches: %v", got)
		}
		// A regeneration: the reply it replaces is a sibling of the new one.
		if v, err = b.Branch(ctx, key, v, 3, reply("a2b", "also sure")); err != nil {
			t.Fatal(err)
		}
		load("u1", "a1", "u2", "a2b")
		if got := branches(); !same(got, []string{"a2<u2"}) {
			t.Fatalf("after a regeneration: %v", got)
		}
		// An edit under the same id: the old version leaves under a fresh
		// id, with what followed it.
		if v, err = b.Branch(ctx, key, v, 2, msg("u2", "edited")); err != nil {
			t.Fatal(err)
		}
		c := load("u1", "a1", "u2")
		if text := c.Messages[2].Content[0].(cmf.Text).Text; text != "edited" {
			t.Fatalf("the edited message says %q", text)
		}
		ns, _ := b.Branches(ctx, key)
		var old string
		for _, n := range ns.Nodes {
			if n.Parent == "a1" {
				old = n.Message.ID()
				if old == "u2" || n.Message.Content[0].(cmf.Text).Text != "more" {
					t.Fatalf("the edited message's old version: %+v", n)
				}
			}
		}
		if got := branches(); !same(got, []string{"a2<" + old, old + "<a1", "a2b<" + old}) {
			t.Fatalf("after an edit: %v (the old version is %s)", got, old)
		}
		if _, err := b.Switch(ctx, key, v-1, old); !errors.Is(err, history.ErrConflict) {
			t.Fatalf("Switch at an old version: %v", err)
		}
		if _, err := b.Switch(ctx, key, v, "nope"); !errors.Is(err, history.ErrNoBranch) {
			t.Fatalf("Switch to no branch: %v", err)
		}
		if _, err := b.Switch(ctx, key, v, "u1"); !errors.Is(err, history.ErrNoBranch) {
			t.Fatalf("Switch to a message on the active branch: %v", err)
		}
		// Back to the old version: the branch it led, down its newest
		// replies; the edited one waits as its sibling.
		if v, err = b.Switch(ctx, key, v, old); err != nil {
			t.Fatal(err)
		}
		load("u1", "a1", old, "a2b")
		if got := branches(); !same(got, []string{"a2<" + old, "u2<a1"}) {
			t.Fatalf("after switching back: %v", got)
		}
		// Versions keep their order: the old one, back on the branch,
		// still comes before the edit.
		tr, err := b.Branches(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if born, ok := tr.Born[old]; !ok || tr.Nodes[1].Born <= born {
			t.Fatalf("the versions' births: %s %d (kept: %v), the edit %d", old, born, ok, tr.Nodes[1].Born)
		}
		if v, err = b.Switch(ctx, key, v, "a2"); err != nil {
			t.Fatal(err)
		}
		load("u1", "a1", old, "a2")
		if got := branches(); !same(got, []string{"a2b<" + old, "u2<a1"}) {
			t.Fatalf("after switching replies: %v", got)
		}
		// An append keeps the branches, and its TTL theirs.
		if v, err = st.Write(ctx, key, v, history.KeepAll, msg("u3", "and")); err != nil {
			t.Fatal(err)
		}
		elapse(40 * time.Second)
		if _, err = st.Write(ctx, key, v, history.KeepAll, reply("a3", "then")); err != nil {
			t.Fatal(err)
		}
		elapse(40 * time.Second)
		load("u1", "a1", old, "a2", "u3", "a3")
		if got := branches(); !same(got, []string{"a2b<" + old, "u2<a1"}) {
			t.Fatalf("after appends: %v", got)
		}
		// A message added under an off-branch message's id takes it: the
		// branch it led goes (one id, one message).
		c = load("u1", "a1", old, "a2", "u3", "a3")
		if _, err = st.Write(ctx, key, c.Version, history.KeepAll, msg("u2", "again")); err != nil {
			t.Fatal(err)
		}
		if got := branches(); !same(got, []string{"a2b<" + old}) {
			t.Fatalf("after a message took an off-branch id: %v", got)
		}
		// A plain Write that cuts keeps nothing of what it cuts, and
		// what followed the cut messages on other branches goes too.
		c = load("u1", "a1", old, "a2", "u3", "a3", "u2")
		if _, err = st.Write(ctx, key, c.Version, 2); err != nil {
			t.Fatal(err)
		}
		load("u1", "a1")
		if got := branches(); len(got) != 0 {
			t.Fatalf("after a plain cut: %v", got)
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if got := branches(); len(got) != 0 {
			t.Fatalf("a deleted chat's branches: %v", got)
		}
	})
}
