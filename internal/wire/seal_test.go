package wire

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

var sealSecret = []byte("a secret every replica shares")

func testSeal() *ChatSeal { return NewChatSeal(sealSecret, "vercel-ai", "alice", "chat-1") }

func opaque(provider, data string) *cmf.Opaque {
	return &cmf.Opaque{Provider: provider, Model: provider + "-model", Data: data}
}

// sealPart seals one part's value as an encoder does, in a step of its
// own.
func sealPart(c *ChatSeal, messageID string, p cmf.Part, ordinal int) string {
	s := &Sealer{seal: c}
	return s.Seal(&agent.PartEnded{Part: p}, messageID, ordinal)
}

// bare is a part as the client's thread holds it: without its value.
func bare(p cmf.Part) cmf.Part { return withOpaque(p, nil) }

func textMsg(role cmf.Role, id, text string) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: []cmf.Part{cmf.Text{Text: text}}}
	m.SetID(id)
	return m
}

func TestSealedValueOpensOnlyWhereItWasSealed(t *testing.T) {
	c := testSeal()
	thinking := cmf.Thinking{Text: "The user wants the weather.", Opaque: opaque("anthropic", "sig-1")}
	v := sealPart(c, "m1", thinking, 0)
	if v == "" || strings.Contains(v, "sig-1") {
		t.Fatalf("sealed = %q: empty, or the value shows through", v)
	}
	body, ok := c.open(v, "m1", bare(thinking), 0)
	if !ok || !reflect.DeepEqual(body.Opaque, thinking.Opaque) {
		t.Fatalf("open = %+v, %v; want %+v", body.Opaque, ok, thinking.Opaque)
	}
	raw, err := sealEncoding.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]struct {
		value     string
		seal      *ChatSeal
		messageID string
		part      cmf.Part
		ordinal   int
	}{
		"another message":                  {v, c, "m2", bare(thinking), 0},
		"another part of its kind":         {v, c, "m1", bare(thinking), 1},
		"a part of another kind":           {v, c, "m1", cmf.Text{Text: thinking.Text}, 0},
		"other content":                    {v, c, "m1", cmf.Thinking{Text: "The user wants the weather!"}, 0},
		"another chat":                     {v, NewChatSeal(sealSecret, "vercel-ai", "alice", "chat-2"), "m1", bare(thinking), 0},
		"another scope":                    {v, NewChatSeal(sealSecret, "vercel-ai", "bob", "chat-1"), "m1", bare(thinking), 0},
		"no scope":                         {v, NewChatSeal(sealSecret, "vercel-ai", "", "chat-1"), "m1", bare(thinking), 0},
		"another protocol":                 {v, NewChatSeal(sealSecret, "ag-ui", "alice", "chat-1"), "m1", bare(thinking), 0},
		"another secret":                   {v, NewChatSeal([]byte("another secret"), "vercel-ai", "alice", "chat-1"), "m1", bare(thinking), 0},
		"a part that carries none":         {v, c, "m1", cmf.ToolResult{ToolCallID: "c", ToolName: "t", Content: json.RawMessage(`1`)}, 0},
		"empty":                            {"", c, "m1", bare(thinking), 0},
		"not base64url":                    {"!" + v[1:], c, "m1", bare(thinking), 0},
		"padded":                           {v + "=", c, "m1", bare(thinking), 0},
		"a byte appended":                  {sealEncoding.EncodeToString(append(raw[:len(raw):len(raw)], 0)), c, "m1", bare(thinking), 0},
		"the version alone":                {sealEncoding.EncodeToString(raw[:1]), c, "m1", bare(thinking), 0},
		"another version":                  {sealEncoding.EncodeToString(append([]byte{2}, raw[1:]...)), c, "m1", bare(thinking), 0},
		"fields run together (id+ordinal)": {v, c, "m1\x00", bare(thinking), 0},
	}
	for name, r := range refused {
		if _, ok := r.seal.open(r.value, r.messageID, r.part, r.ordinal); ok {
			t.Errorf("%s: opened", name)
		}
	}
	// Every byte altered, and every truncation.
	for i := range raw {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			b := append([]byte(nil), raw...)
			b[i] ^= flip
			if _, ok := c.open(sealEncoding.EncodeToString(b), "m1", bare(thinking), 0); ok {
				t.Fatalf("byte %d ^ %#x: opened", i, flip)
			}
		}
	}
	for n := range len(raw) {
		if _, ok := c.open(sealEncoding.EncodeToString(raw[:n]), "m1", bare(thinking), 0); ok {
			t.Fatalf("truncated to %d bytes: opened", n)
		}
	}
	for n := range len(v) {
		if _, ok := c.open(v[:n], "m1", bare(thinking), 0); ok {
			t.Fatalf("truncated to %d characters: opened", n)
		}
	}
}

// A tool call's value is bound to its id, name and arguments; arguments
// a browser writes back in another form (keys in another order, 1.0 as
// 1) are the same arguments.
func TestSealedCallValueIsBoundToTheCall(t *testing.T) {
	c := testSeal()
	call := cmf.ToolCall{ToolCallID: "call-1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo","days":1.0}`), Opaque: opaque("gemini", "c2ln")}
	v := sealPart(c, "m1", call, 0)
	for _, args := range []string{`{"city":"Oslo","days":1.0}`, `{"days":1,"city":"Oslo"}`, `{ "city" : "Oslo", "days" : 1e0 }`} {
		got := call
		got.Arguments, got.Opaque = json.RawMessage(args), nil
		if _, ok := c.open(v, "m1", got, 0); !ok {
			t.Errorf("arguments %s: refused", args)
		}
	}
	for name, other := range map[string]cmf.ToolCall{
		"other arguments": {ToolCallID: "call-1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":1}`)},
		"another call id": {ToolCallID: "call-2", Name: "get_weather", Arguments: call.Arguments},
		"another tool":    {ToolCallID: "call-1", Name: "delete_file", Arguments: call.Arguments},
	} {
		if _, ok := c.open(v, "m1", other, 0); ok {
			t.Errorf("%s: opened", name)
		}
	}
}

// The step a reply streamed, as the run ends its parts, and the thread a
// client sends back with it: the parts without their values, each value
// sealed beside its part.
type sealedStep struct {
	parts  []cmf.Part // as the server has them, in order
	thread []cmf.Message
	sealed []SealedValue
}

// sealStep seals an assistant message's parts as an encoder does (its
// ordinals counted per kind), and puts the bare message at index 1 of a
// thread after a user message, with a tool result after it.
func sealStep(t testing.TB, c *ChatSeal, id string, parts ...cmf.Part) sealedStep {
	t.Helper()
	s := &Sealer{seal: c}
	st := sealedStep{parts: parts}
	msg := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
	msg.SetID(id)
	counts := map[byte]int{}
	for _, p := range parts {
		v := s.Seal(&agent.PartEnded{Part: p}, id, counts[sealKind(p)])
		if _, redacted := p.(cmf.RedactedThinking); redacted {
			continue
		}
		counts[sealKind(p)]++
		if v != "" {
			st.sealed = append(st.sealed, SealedValue{Message: 1, Part: len(msg.Content), Value: v})
		}
		msg.Content = append(msg.Content, bare(p))
	}
	st.thread = []cmf.Message{textMsg(cmf.RoleUser, "u1", "Weather in Oslo?"), msg}
	return st
}

func TestOpenAllPutsValuesBackInPlace(t *testing.T) {
	c := testSeal()
	redacted := cmf.RedactedThinking{Opaque: *opaque("anthropic", "redacted-1")}
	st := sealStep(t, c, "m1",
		cmf.Thinking{Text: "First.", Opaque: opaque("anthropic", "sig-1")},
		redacted,
		cmf.Thinking{Text: "Second.", Opaque: opaque("anthropic", "sig-2")},
		cmf.Text{Text: "Let me look."},
		cmf.ToolCall{ToolCallID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`), Opaque: opaque("anthropic", "blocks")},
	)
	if len(st.sealed) != 3 {
		t.Fatalf("sealed %d values, want 3 (the text carries none)", len(st.sealed))
	}
	before := st.thread[1].Content
	u := c.OpenAll(st.thread, st.sealed)
	if u.Refused != 0 {
		t.Fatalf("refused %d", u.Refused)
	}
	if !reflect.DeepEqual(u.Msgs[1].Content, st.parts) {
		t.Fatalf("opened\n%+v\nwant\n%+v", u.Msgs[1].Content, st.parts)
	}
	if !reflect.DeepEqual(st.thread[1].Content, before) {
		t.Fatal("openAll changed the client's thread")
	}
	for _, at := range [][2]int{{1, 0}, {1, 1}, {1, 2}, {1, 4}} {
		if !u.Trusted[at] {
			t.Errorf("position %v not trusted: %v", at, u.Trusted)
		}
	}
	if u.Trusted[[2]int{1, 3}] || len(u.Trusted) != 4 {
		t.Errorf("trusted = %v", u.Trusted)
	}
}

func TestOpenAllDropsWhatWasTamperedWith(t *testing.T) {
	c := testSeal()
	step := func() sealedStep {
		return sealStep(t, c, "m1",
			cmf.Thinking{Text: "First.", Opaque: opaque("anthropic", "sig-1")},
			cmf.Thinking{Text: "Second.", Opaque: opaque("anthropic", "sig-2")},
			cmf.ToolCall{ToolCallID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{}`), Opaque: opaque("anthropic", "sig-3")},
		)
	}
	for _, c2 := range []struct {
		name    string
		tamper  func(*sealedStep)
		kept    []int // parts of the message that keep their value
		refused int
	}{
		{"untouched", func(*sealedStep) {}, []int{0, 1, 2}, 0},
		{"a byte altered", func(s *sealedStep) {
			b := []byte(s.sealed[1].Value)
			b[10] ^= 1
			s.sealed[1].Value = string(b)
		}, []int{0}, 2}, // the second fails, and the third follows a gap
		{"the first dropped", func(s *sealedStep) { s.sealed = s.sealed[1:] }, nil, 2},
		{"the last dropped", func(s *sealedStep) { s.sealed = s.sealed[:2] }, []int{0, 1}, 0},
		{"two swapped", func(s *sealedStep) {
			s.sealed[0].Value, s.sealed[1].Value = s.sealed[1].Value, s.sealed[0].Value
		}, nil, 3},
		{"moved to another part", func(s *sealedStep) { s.sealed[2].Part = 1; s.sealed = s.sealed[1:] }, nil, 2},
		{"moved to another message", func(s *sealedStep) {
			other := s.thread[1]
			other.SetID("m2")
			s.thread = append(s.thread, other)
			for i := range s.sealed {
				s.sealed[i].Message = 2
			}
		}, nil, 3},
		{"replayed on new content", func(s *sealedStep) {
			s.thread[1].Content = append([]cmf.Part(nil), s.thread[1].Content...)
			s.thread[1].Content[1] = cmf.Thinking{Text: "Something else."}
		}, []int{0}, 2},
		{"twice on one part", func(s *sealedStep) { s.sealed = append(s.sealed, s.sealed[0]) }, []int{0, 1, 2}, 1},
		{"the message twice", func(s *sealedStep) {
			s.thread = append(s.thread, s.thread[1])
			for _, sv := range s.sealed {
				sv.Message = 2
				s.sealed = append(s.sealed, sv)
			}
		}, []int{0, 1, 2}, 3},
		{"out of range", func(s *sealedStep) {
			s.sealed = append(s.sealed, SealedValue{Message: 7, Part: 0, Value: s.sealed[0].Value},
				SealedValue{Message: 1, Part: 9, Value: s.sealed[0].Value}, SealedValue{Message: -1, Part: -1, Value: "x"},
				SealedValue{Message: 0, Part: 0, Value: s.sealed[0].Value})
		}, []int{0, 1, 2}, 4},
	} {
		t.Run(c2.name, func(t *testing.T) {
			s := step()
			c2.tamper(&s)
			u := c.OpenAll(s.thread, s.sealed)
			if u.Refused != c2.refused {
				t.Errorf("refused %d, want %d", u.Refused, c2.refused)
			}
			var kept []int
			for j, p := range u.Msgs[1].Content {
				if opaqueOf(p) != nil {
					kept = append(kept, j)
					if !reflect.DeepEqual(p, s.parts[j]) {
						t.Errorf("part %d = %+v, want %+v", j, p, s.parts[j])
					}
				}
			}
			if !reflect.DeepEqual(kept, c2.kept) {
				t.Errorf("kept values on parts %v, want %v", kept, c2.kept)
			}
			for i, m := range u.Msgs {
				if i == 1 {
					continue
				}
				for _, p := range m.Content {
					if opaqueOf(p) != nil {
						t.Errorf("message %d got a value: %+v", i, p)
					}
				}
			}
		})
	}
}

// A value opens only on an assistant message: the model's own output is
// all the server seals. Moved with its part onto a message of another
// role (same id, same content, so that its binding alone would let it
// open) it is refused, and nothing there is trusted.
func TestOpenAllOpensOnlyOnAssistantMessages(t *testing.T) {
	c := testSeal()
	for _, role := range []cmf.Role{cmf.RoleUser, cmf.RoleTool, cmf.RoleSystem, cmf.RoleDeveloper} {
		t.Run(string(role), func(t *testing.T) {
			st := sealStep(t, c, "m1",
				cmf.Thinking{Text: "Plan.", Opaque: opaque("anthropic", "sig-1")},
				cmf.Text{Text: "Sunny.", Opaque: opaque("gemini", "sig-2")},
			)
			if u := c.OpenAll(st.thread, st.sealed); u.Refused != 0 || len(u.Trusted) != 2 {
				t.Fatalf("on the assistant message: refused %d, trusted %v", u.Refused, u.Trusted)
			}
			st.thread[1].Role = role
			u := c.OpenAll(st.thread, st.sealed)
			if u.Refused != len(st.sealed) || len(u.Trusted) != 0 {
				t.Fatalf("refused %d of %d, trusted %v", u.Refused, len(st.sealed), u.Trusted)
			}
			for _, p := range u.Msgs[1].Content {
				if opaqueOf(p) != nil {
					t.Fatalf("a value opened on a %s message: %+v", role, p)
				}
			}
		})
	}
}

// Redacted thinking travels with the next part of its step; what no
// part of its step follows is lost, not carried into the next step.
func TestRedactedThinkingTravelsWithTheNextPartOfItsStep(t *testing.T) {
	c := testSeal()
	s := &Sealer{seal: c}
	r1 := cmf.RedactedThinking{Opaque: *opaque("anthropic", "r1")}
	r2 := cmf.RedactedThinking{Opaque: *opaque("anthropic", "r2")}
	text := cmf.Text{Text: "Hello."}
	if v := s.Seal(&agent.PartEnded{Kind: agent.PartRedactedThinking, Part: r1}, "", 0); v != "" {
		t.Fatalf("redacted thinking sealed on its own: %q", v)
	}
	v := s.Seal(&agent.PartEnded{Part: text}, "m1", 0) // a part without a value carries it
	body, ok := c.open(v, "m1", text, 0)
	if !ok || body.Opaque != nil || !reflect.DeepEqual(body.Redacted, []cmf.Opaque{r1.Opaque}) {
		t.Fatalf("body = %+v, %v", body, ok)
	}
	s.Seal(&agent.PartEnded{Part: r2}, "", 0)
	s.EndStep()
	if v := s.Seal(&agent.PartEnded{Part: text}, "m2", 0); v != "" {
		t.Fatalf("a text of the next step carried the last step's redacted thinking: %q", v)
	}
}

// FuzzOpenSealed: opening never panics, and accepts nothing but a value
// the key sealed, at the place and on the part it sealed it for. Each
// value the fuzz target seals names its place in its data, so a value
// that opens proves where it was sealed (fuzzing workers seal their own
// seeds, under the same key).
func FuzzOpenSealed(f *testing.F) {
	c := testSeal()
	for _, pl := range []struct {
		message string
		kind    byte
		text    string
		ordinal int
	}{
		{"m1", sealThinking, "Plan.", 0},
		{"m1", sealText, "Sunny.", 1},
		{"m1-step2", sealToolCall, "call-1", 0},
		{"", sealText, "", 0},
	} {
		v := sealPart(c, pl.message, fuzzPart(pl.kind, pl.text, opaque("gemini", fuzzPlace(pl.message, pl.kind, pl.text, pl.ordinal))), pl.ordinal)
		f.Add(v, pl.message, pl.kind, pl.text, pl.ordinal)
		f.Add(v, pl.message+"x", pl.kind, pl.text, pl.ordinal)
		f.Add(v, pl.message, pl.kind, pl.text, pl.ordinal+1)
		f.Add(v[:len(v)-1]+"A", pl.message, pl.kind, pl.text, pl.ordinal)
	}
	f.Add("AQ", "m", byte(1), "t", 0)
	plain := (&sealedBody{Step: 7, Seq: 1, Opaque: opaque("gemini", "x"), Redacted: []cmf.Opaque{*opaque("anthropic", "r")}}).marshal()
	f.Add(string(plain), "m", byte(1), "t", 0)
	f.Fuzz(func(t *testing.T, value, message string, kind byte, text string, ordinal int) {
		if ordinal < 0 {
			ordinal = 0
		}
		// The plaintext's reader, on anything: it never panics, and what
		// it reads writes back to what reads the same.
		var plain sealedBody
		if plain.unmarshal([]byte(value)) {
			var again sealedBody
			if !again.unmarshal(plain.marshal()) || !reflect.DeepEqual(again, plain) {
				t.Fatalf("plaintext %q read as %+v, then %+v", value, plain, again)
			}
		}
		part := fuzzPart(kind, text, nil)
		body, ok := c.open(value, message, part, ordinal)
		if !ok {
			return
		}
		if want := fuzzPlace(message, sealKind(part), text, ordinal); body.Opaque == nil || body.Opaque.Data != want {
			t.Fatalf("opened %+v at %s: sealed elsewhere", body.Opaque, want)
		}
	})
}

func fuzzPlace(message string, kind byte, text string, ordinal int) string {
	return strconv.Quote(message) + " " + strconv.Itoa(int(kind)) + " " + strconv.Quote(text) + " " + strconv.Itoa(ordinal)
}

func fuzzPart(kind byte, text string, o *cmf.Opaque) cmf.Part {
	switch kind % 4 {
	case sealText:
		return cmf.Text{Text: text, Opaque: o}
	case sealThinking:
		return cmf.Thinking{Text: text, Opaque: o}
	case sealToolCall:
		return cmf.ToolCall{ToolCallID: text, Name: "get_weather", Arguments: json.RawMessage(`{}`), Opaque: o}
	}
	return cmf.ToolResult{ToolCallID: text, ToolName: "x", Content: json.RawMessage(`1`)}
}

// BenchmarkSealing is what sealing adds to a request without history:
// the chat's key (once per request), sealing a step's values as the
// encoder ends its parts (an Anthropic-sized signature each), and
// opening them when they come back.
func BenchmarkSealing(b *testing.B) {
	sig := strings.Repeat("EqQBCkgIBhABGAIiQL", 24) // ~430 bytes, a thinking signature's size
	parts := []cmf.Part{
		cmf.Thinking{Text: strings.Repeat("The user wants the weather. ", 20), Opaque: opaque("anthropic", sig)},
		cmf.Thinking{Text: "Oslo, then.", Opaque: opaque("anthropic", sig)},
		cmf.Text{Text: "Let me look.", Opaque: opaque("anthropic", sig)},
		cmf.ToolCall{ToolCallID: "call-1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`), Opaque: opaque("gemini", sig)},
	}
	b.Run("key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NewChatSeal(sealSecret, "vercel-ai", "alice", "chat-1")
		}
	})
	c := testSeal()
	b.Run("seal-step", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := &Sealer{seal: c}
			for i, p := range parts {
				s.Seal(&agent.PartEnded{Part: p}, "m1", i)
			}
		}
	})
	st := sealStep(b, c, "m1", parts...)
	b.Run("open-step", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if u := c.OpenAll(st.thread, st.sealed); u.Refused != 0 {
				b.Fatal("refused")
			}
		}
	})
}
