package wire

import (
	"cmp"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// Without history the client's thread is the conversation, and the
// provider values of a reply (thinking signatures, redacted thinking,
// Gemini's thought signatures, Responses reasoning items) would be lost
// with it: the server never takes them from a client. So the server seals
// them for the client to carry: each travels encrypted and authenticated
// with the part it belongs to, and comes back as an opaque string the
// browser can neither read nor use anywhere else.
//
// A sealed value is
//
//	base64url( version | 12-byte nonce | AES-256-GCM(plaintext) )
//
// under a key derived (HKDF-SHA256) from the handler's secret
// ([WithSecret]) with a label of its own, then for the protocol, the
// scope and the chat: a value opens only in the chat it was sealed for.
// Its associated data binds it to its part as the client's thread holds
// it: the message's id, the part's kind, its ordinal among that message's
// parts of its kind, and a digest of what the part shows (its text; a
// tool call's id, name and arguments in canonical JSON). The plaintext
// holds the value, the redacted thinking that came right before the part
// in its step (it has no part of its own to travel with), and the
// value's place in its step's sequence. A value that was altered, moved
// to another part, message, chat or scope, replayed onto other content,
// sealed under another secret, or follows a gap in its step's sequence
// is dropped, and counted ([Findings].Sealed).

// sealVersion is the first byte of every sealed value.
const sealVersion = 1

// sealSalt separates the sealing keys from every other use of the
// handler's secret (the approval signatures).
const sealSalt = "agentui sealed provider values"

// sealOverhead is the least a sealed value holds besides its plaintext:
// the version, the nonce and GCM's tag.
const sealOverhead = 1 + 12 + 16

// ChatSeal seals and opens the provider values of one chat.
type ChatSeal struct {
	aead cipher.AEAD
}

// newChatSeal derives the sealing key of one chat from the handler's
// secret; nil if it cannot (a secret too short for HMAC in FIPS 140-only
// mode), and then nothing is sealed or opened.
func NewChatSeal(secret []byte, protocol, scope, chat string) *ChatSeal {
	prk, err := hkdf.Extract(sha256.New, secret, []byte(sealSalt))
	if err != nil {
		return nil
	}
	info := appendField(appendField(appendField(nil, protocol), scope), chat)
	key, err := hkdf.Expand(sha256.New, prk, string(info), 32)
	if err != nil {
		return nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil
	}
	return &ChatSeal{aead: aead}
}

// The kinds of part a sealed value can travel with: what the client's
// thread shows of the part.
const (
	sealText byte = iota + 1
	sealThinking
	sealToolCall
)

// sealKind is the kind of a part that can carry a sealed value, or 0.
func sealKind(p cmf.Part) byte {
	switch p.(type) {
	case cmf.Text:
		return sealText
	case cmf.Thinking:
		return sealThinking
	case cmf.ToolCall:
		return sealToolCall
	}
	return 0
}

// opaqueOf is the provider value a part carries, or nil.
func opaqueOf(p cmf.Part) *cmf.Opaque {
	switch p := p.(type) {
	case cmf.Text:
		return p.Opaque
	case cmf.Thinking:
		return p.Opaque
	case cmf.ToolCall:
		return p.Opaque
	}
	return nil
}

// withOpaque returns p carrying o.
func withOpaque(p cmf.Part, o *cmf.Opaque) cmf.Part {
	switch q := p.(type) {
	case cmf.Text:
		q.Opaque = o
		return q
	case cmf.Thinking:
		q.Opaque = o
		return q
	case cmf.ToolCall:
		q.Opaque = o
		return q
	}
	return p
}

// associated is the data a sealed value is bound to: where the client's
// thread holds its part, and what the part shows.
func associated(messageID string, p cmf.Part, ordinal int) []byte {
	kind := sealKind(p)
	d := sha256.New()
	switch p := p.(type) {
	case cmf.Text:
		d.Write(shownText(p.Text))
	case cmf.Thinking:
		d.Write(shownText(p.Text))
	case cmf.ToolCall:
		d.Write(appendField(appendField(appendField(nil, p.ToolCallID), p.Name), string(CanonicalJSON(p.Arguments))))
	}
	b := make([]byte, 0, 2+binary.MaxVarintLen64*2+len(messageID)+sha256.Size)
	b = append(b, sealVersion, kind)
	b = binary.AppendUvarint(b, uint64(ordinal))
	b = appendField(b, messageID)
	return d.Sum(b)
}

// shownText is text as a client holds it after a round trip through
// JSON: every byte that is not valid UTF-8 becomes U+FFFD, as the
// encoders write it.
func shownText(s string) []byte {
	if utf8.ValidString(s) {
		return []byte(s)
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// appendField appends a length-prefixed string, so that fields cannot
// run together.
func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// sealedBody is a sealed value's plaintext.
type sealedBody struct {
	// Step names the step the part belongs to (random), and Seq is the
	// value's place among the values sealed in that step: a value opens
	// only after all those before it in its step.
	Step uint64
	Seq  int
	// Opaque is the part's own value, if any.
	Opaque *cmf.Opaque
	// Redacted is the redacted thinking that came right before the part
	// in its step, in order.
	Redacted []cmf.Opaque
}

// marshal writes the plaintext: the step (8 bytes), the sequence number
// (uvarint), 1 or 0 and the part's value, the number of redacted values
// (uvarint) and each; a value is its provider, model, id and data, each
// length-prefixed.
func (b *sealedBody) marshal() []byte {
	n := 8 + 2*binary.MaxVarintLen64 + 1 + opaqueSize(b.Opaque)
	for i := range b.Redacted {
		n += opaqueSize(&b.Redacted[i])
	}
	out := binary.BigEndian.AppendUint64(make([]byte, 0, n), b.Step)
	out = binary.AppendUvarint(out, uint64(b.Seq))
	if b.Opaque != nil {
		out = appendOpaque(append(out, 1), b.Opaque)
	} else {
		out = append(out, 0)
	}
	out = binary.AppendUvarint(out, uint64(len(b.Redacted)))
	for i := range b.Redacted {
		out = appendOpaque(out, &b.Redacted[i])
	}
	return out
}

func opaqueSize(o *cmf.Opaque) int {
	if o == nil {
		return 0
	}
	return 4*binary.MaxVarintLen64 + len(o.Provider) + len(o.Model) + len(o.ID) + len(o.Data)
}

func appendOpaque(b []byte, o *cmf.Opaque) []byte {
	return appendField(appendField(appendField(appendField(b, o.Provider), o.Model), o.ID), o.Data)
}

// unmarshal reads what marshal wrote; false for anything else.
func (b *sealedBody) unmarshal(p []byte) bool {
	r := plainReader{p: p}
	if len(p) < 8 {
		return false
	}
	b.Step, r.p = binary.BigEndian.Uint64(p), p[8:]
	seq := r.uvarint()
	if seq > math.MaxInt32 {
		return false
	}
	b.Seq = int(seq)
	if r.byte() == 1 {
		o := r.opaque()
		b.Opaque = &o
	}
	n := r.uvarint()
	if n > uint64(len(r.p)) { // each value takes at least a byte
		return false
	}
	for range n {
		b.Redacted = append(b.Redacted, r.opaque())
	}
	return !r.bad && len(r.p) == 0
}

// plainReader reads a plaintext, remembering whether it ran short.
type plainReader struct {
	p   []byte
	bad bool
}

func (r *plainReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.bad, r.p = true, nil
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *plainReader) byte() byte {
	if len(r.p) == 0 {
		r.bad = true
		return 0
	}
	c := r.p[0]
	r.p = r.p[1:]
	return c
}

func (r *plainReader) field() string {
	n := r.uvarint()
	if n > uint64(len(r.p)) {
		r.bad, r.p = true, nil
		return ""
	}
	f := string(r.p[:n])
	r.p = r.p[n:]
	return f
}

func (r *plainReader) opaque() cmf.Opaque {
	return cmf.Opaque{Provider: r.field(), Model: r.field(), ID: r.field(), Data: r.field()}
}

// seal returns the sealed form of body for the part p at its place.
func (c *ChatSeal) seal(body *sealedBody, messageID string, p cmf.Part, ordinal int) string {
	plain := body.marshal()
	out := make([]byte, 1+c.aead.NonceSize(), 1+c.aead.NonceSize()+len(plain)+c.aead.Overhead())
	out[0] = sealVersion
	nonce := out[1:]
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails on supported platforms
	out = c.aead.Seal(out, nonce, plain, associated(messageID, p, ordinal))
	return sealEncoding.EncodeToString(out)
}

// sealEncoding is how a sealed value travels: URL-safe base64 without
// padding, strict, so that one value has one spelling.
var sealEncoding = base64.RawURLEncoding.Strict()

// open reads a sealed value a client sent with the part p at its place;
// false unless this chat's key sealed it for that place and that part.
func (c *ChatSeal) open(sealed, messageID string, p cmf.Part, ordinal int) (sealedBody, bool) {
	if sealKind(p) == 0 || len(sealed) > sealEncoding.EncodedLen(maxSealedBytes) {
		return sealedBody{}, false
	}
	raw, err := sealEncoding.DecodeString(sealed)
	if err != nil || len(raw) < sealOverhead || raw[0] != sealVersion {
		return sealedBody{}, false
	}
	nonce, ct := raw[1:1+c.aead.NonceSize()], raw[1+c.aead.NonceSize():]
	plain, err := c.aead.Open(ct[:0], nonce, ct, associated(messageID, p, ordinal))
	if err != nil {
		return sealedBody{}, false
	}
	var body sealedBody
	if !body.unmarshal(plain) || withOpaque(p, body.Opaque).Validate() != nil {
		return sealedBody{}, false
	}
	for _, r := range body.Redacted {
		if (cmf.RedactedThinking{Opaque: r}).Validate() != nil {
			return sealedBody{}, false
		}
	}
	return body, true
}

// maxSealedBytes bounds what open decodes: more than any provider value a
// part carries (a Responses reasoning item's encrypted content is tens of
// kilobytes at most), so a client cannot make it decode megabytes.
const maxSealedBytes = 4 << 20

// SealedValue is a sealed provider value a client sent back with a part
// of its thread: Turn.Messages[Message].Content[Part] is the part it came
// with (see [Sealer]). A decoder sets it; it is untrusted until the
// handler opens it, which only a handler without history does.
type SealedValue struct {
	Message, Part int
	Value         string
}

// Sealer seals the provider values of one run's parts, for a client that
// carries the conversation itself (a handler without history sets
// [Turn].Sealer). An encoder asks it for each part it ends, with the
// place the client's thread will hold the part at: the id of the message
// that holds it, as the protocol's decoder will name that message, and
// the part's ordinal among that message's parts of its kind (text,
// thinking, tool call). It sends the result with the part, and the
// decoder reads it back into [Turn].Sealed.
//
// A Sealer serves one run, from one goroutine.
type Sealer struct {
	seal *ChatSeal
	// derive gives seal on first use, when not given.
	derive func() *ChatSeal
	step   uint64       // the open step's id; 0 before its first value
	seq    int          // values sealed in the open step so far
	held   []cmf.Opaque // redacted thinking waiting for the next part of its step
}

// Seal returns the sealed value for an ended part at its place, or ""
// when it carries nothing: a part without a provider value that no
// redacted thinking came before. Redacted thinking ([agent.PartRedactedThinking])
// returns "" and travels with the next part of its step that the
// encoder seals; if its step has none, it is lost.
func (s *Sealer) Seal(ev *agent.PartEnded, messageID string, ordinal int) string {
	if s == nil || ev == nil {
		return ""
	}
	if r, ok := ev.Part.(cmf.RedactedThinking); ok {
		s.held = append(s.held, r.Opaque)
		return ""
	}
	o := opaqueOf(ev.Part)
	if sealKind(ev.Part) == 0 || (o == nil && len(s.held) == 0) {
		return ""
	}
	if s.seal == nil && s.derive != nil {
		s.seal, s.derive = s.derive(), nil
	}
	if s.seal == nil {
		return ""
	}
	if s.step == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		s.step = binary.BigEndian.Uint64(b[:]) | 1 // never 0: that means "no step yet"
	}
	body := &sealedBody{Step: s.step, Seq: s.seq, Opaque: o, Redacted: s.held}
	s.seq++
	s.held = nil
	return s.seal.seal(body, messageID, ev.Part, ordinal)
}

// EndStep ends the open step: redacted thinking that no part of it
// carried is dropped, and the next value starts a new step's sequence.
func (s *Sealer) EndStep() {
	if s == nil {
		return
	}
	s.step, s.seq, s.held = 0, 0, nil
}

// Unsealed is a client's thread with its sealed values opened.
type Unsealed struct {
	// msgs is the thread with each value that opened on its part, and the
	// redacted thinking it carried before that part; a message that
	// changed is a copy.
	Msgs []cmf.Message
	// trusted are the positions (message, part) in msgs of the provider
	// values the server sealed, which sanitizing keeps.
	Trusted map[[2]int]bool
	// refused counts the values dropped: they did not open, or did not
	// follow the values before them in their step.
	Refused int
}

// OpenAll opens the sealed values a client sent with its thread. It does
// no I/O and does not change msgs.
func (c *ChatSeal) OpenAll(msgs []cmf.Message, sealed []SealedValue) Unsealed {
	type opened struct {
		at   [2]int
		body sealedBody
	}
	var ok []opened
	out := Unsealed{Msgs: msgs}
	seen := map[[2]int]bool{}
	for _, sv := range sealed {
		at := [2]int{sv.Message, sv.Part}
		if sv.Message < 0 || sv.Message >= len(msgs) || sv.Part < 0 || sv.Part >= len(msgs[sv.Message].Content) ||
			seen[at] || c == nil || msgs[sv.Message].Role != cmf.RoleAssistant {
			out.Refused++
			continue
		}
		seen[at] = true
		m := &msgs[sv.Message]
		p := m.Content[sv.Part]
		body, good := c.open(sv.Value, m.ID(), p, ordinalOf(m.Content, sv.Part))
		if !good {
			out.Refused++
			continue
		}
		ok = append(ok, opened{at, body})
	}
	// A step's values count only as an unbroken run from its first: a
	// provider may refuse a reasoning block whose predecessors in its
	// turn are missing, so a value after a gap goes too.
	slices.SortFunc(ok, func(a, b opened) int {
		return cmp.Or(cmp.Compare(a.body.Step, b.body.Step), cmp.Compare(a.body.Seq, b.body.Seq),
			cmp.Compare(a.at[0], b.at[0]), cmp.Compare(a.at[1], b.at[1]))
	})
	var kept []opened
	for _, o := range ok {
		n := len(kept)
		if o.body.Seq == 0 && (n == 0 || kept[n-1].body.Step != o.body.Step) ||
			n > 0 && kept[n-1].body.Step == o.body.Step && kept[n-1].body.Seq+1 == o.body.Seq {
			kept = append(kept, o)
			continue
		}
		out.Refused++
	}
	if len(kept) == 0 {
		return out
	}
	// Re-attach in thread order, so that inserting redacted thinking
	// shifts only the parts after it.
	slices.SortFunc(kept, func(a, b opened) int {
		return cmp.Or(cmp.Compare(a.at[0], b.at[0]), cmp.Compare(a.at[1], b.at[1]))
	})
	out.Msgs = slices.Clone(msgs)
	out.Trusted = map[[2]int]bool{}
	for i := 0; i < len(kept); {
		mi := kept[i].at[0]
		m := out.Msgs[mi]
		content := make([]cmf.Part, 0, len(m.Content)+len(kept[i].body.Redacted))
		next := 0
		for ; i < len(kept) && kept[i].at[0] == mi; i++ {
			o := kept[i]
			content = append(content, m.Content[next:o.at[1]]...)
			for _, r := range o.body.Redacted {
				out.Trusted[[2]int{mi, len(content)}] = true
				content = append(content, cmf.RedactedThinking{Opaque: r})
			}
			out.Trusted[[2]int{mi, len(content)}] = true
			content = append(content, withOpaque(m.Content[o.at[1]], o.body.Opaque))
			next = o.at[1] + 1
		}
		m.Content = append(content, m.Content[next:]...)
		out.Msgs[mi] = m
	}
	return out
}

// ordinalOf is the ordinal of content[i] among the parts of its kind.
func ordinalOf(content []cmf.Part, i int) int {
	kind, n := sealKind(content[i]), 0
	for _, p := range content[:i] {
		if sealKind(p) == kind {
			n++
		}
	}
	return n
}

// NewSealer is the Sealer of one run: with seal when the request needed
// the chat's key to open what it brought, else deriving it with derive
// when the run first has a value to seal (a model without provider values
// never pays for it).
func NewSealer(seal *ChatSeal, derive func() *ChatSeal) *Sealer {
	return &Sealer{seal: seal, derive: derive}
}
