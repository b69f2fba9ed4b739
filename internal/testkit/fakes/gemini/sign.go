package gemini

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Thought signatures are the model's encrypted reasoning state; the fake
// makes them a MAC over the model and the content of the part that
// carries them, so that a signature altered, moved to another part or
// sent to another model fails as the real one does ("Corrupted thought
// signature."). They are stateless: a fake restarted with the same secret
// accepts the signatures it issued before.

// sigMagic starts every signature the fake issues, so that one is never
// mistaken for base64 text that happens to decode.
var sigMagic = []byte{0x12, 0x20, 'f', 'k'}

// Sentinels are the values Google documents for a function call whose
// signature is not available (history from another model, calls made up
// by the client): "skip_thought_signature_validator" and
// "context_engineering_is_the_way_to_go". The API accepts them in place of
// a signature, sent as the bytes of that text (Google's ADK and
// pydantic-ai) or as the text itself (the AI SDK, whose string the API
// decodes as URL-safe base64).
var Sentinels = []string{"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}

// defaultSecret keys the MAC unless a test gives its own: the fake is
// deterministic, so a recorded conversation replays against a new fake.
var defaultSecret = []byte("agentui fake gemini")

// sign returns the signature for p in a reply of model, as it travels
// (base64).
func (s *Server) sign(model string, p *Part) string {
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte(model))
	mac.Write([]byte{0})
	mac.Write(partContent(p))
	return base64.StdEncoding.EncodeToString(append(append([]byte{}, sigMagic...), mac.Sum(nil)...))
}

// Sign returns the signature the fake issues for p when model produces
// it: what a test expects to see replayed.
func (s *Server) Sign(model string, p Part) string { return s.sign(model, &p) }

// checkSignature reports whether sig is valid on p for model: the fake's
// own signature for that part, or a documented sentinel.
func (s *Server) checkSignature(model string, p *Part) bool {
	sig := p.ThoughtSignature
	for _, sentinel := range Sentinels {
		if sig == sentinel {
			return true
		}
	}
	raw, ok := decodeBytes(sig)
	if !ok {
		return false
	}
	for _, sentinel := range Sentinels {
		if string(raw) == sentinel {
			return true
		}
	}
	want, _ := base64.StdEncoding.DecodeString(s.sign(model, p))
	return hmac.Equal(raw, want)
}

// decodeBytes decodes a bytes field as protobuf's JSON mapping does:
// standard or URL-safe base64, padded or not.
func decodeBytes(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// partContent is what a signature covers: the kind of part and its
// content. A function call's id is not covered: clients may assign ids to
// calls that came without one (the AI SDK does, and the real API accepts
// its real signatures with them).
func partContent(p *Part) []byte {
	var b bytes.Buffer
	switch {
	case p.FunctionCall != nil:
		b.WriteString("call\x00")
		b.WriteString(p.FunctionCall.Name)
		b.WriteByte(0)
		b.Write(canonicalJSON(p.FunctionCall.Args))
	case p.Text != nil:
		b.WriteString("text\x00")
		b.WriteString(strconv.FormatBool(p.Thought))
		b.WriteByte(0)
		b.WriteString(*p.Text)
	case p.InlineData != nil:
		b.WriteString("blob\x00")
		b.WriteString(p.InlineData.MIMEType)
		b.WriteByte(0)
		b.WriteString(p.InlineData.Data)
	default:
		b.WriteString("other")
	}
	return b.Bytes()
}

// canonicalJSON rewrites a JSON value with sorted keys and no spaces: a
// function call's arguments are a protobuf Struct, whose key order and
// spacing carry nothing. Absent arguments are an empty object.
func canonicalJSON(raw json.RawMessage) []byte {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return []byte("{}")
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return out
}
