package agui_test

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/uiadapter"
)

func sealingServer(t *testing.T, secret string, opts ...uiadapter.Option) (*testutil.SealingAgent, string, *testutil.LogBuffer) {
	t.Helper()
	a := &testutil.SealingAgent{}
	logs := &testutil.LogBuffer{}
	opts = append([]uiadapter.Option{uiadapter.WithSecret([]byte(secret)), uiadapter.WithLogger(testutil.Logger(logs))}, opts...)
	srv := httptest.NewServer(testutil.Must(agui.Handler(a, opts...)))
	t.Cleanup(srv.Close)
	return a, srv.URL, logs
}

// threadOf builds the messages a run's events add to a thread, as
// @ag-ui/client's reducer does: text, reasoning and tool messages, tool
// calls on their parent message, encrypted values on the message or
// call they name.
func threadOf(events testutil.Chunks) []map[string]any {
	var msgs []map[string]any
	byID := map[string]map[string]any{}
	calls := map[string]map[string]any{}
	add := func(m map[string]any) {
		msgs = append(msgs, m)
		byID[m["id"].(string)] = m
	}
	for _, e := range events {
		str := func(k string) string { s, _ := e[k].(string); return s }
		switch e["type"] {
		case "TEXT_MESSAGE_START":
			if byID[str("messageId")] == nil {
				add(map[string]any{"id": str("messageId"), "role": "assistant", "content": ""})
			}
		case "TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT":
			m := byID[str("messageId")]
			m["content"] = m["content"].(string) + str("delta")
		case "REASONING_MESSAGE_START":
			add(map[string]any{"id": str("messageId"), "role": "reasoning", "content": ""})
		case "TOOL_CALL_START":
			parent := byID[str("parentMessageId")]
			if parent == nil {
				parent = map[string]any{"id": str("toolCallId"), "role": "assistant"}
				add(parent)
			}
			c := map[string]any{"id": str("toolCallId"), "type": "function", "function": map[string]any{"name": str("toolCallName"), "arguments": ""}}
			calls[str("toolCallId")] = c
			list, _ := parent["toolCalls"].([]any)
			parent["toolCalls"] = append(list, c)
		case "TOOL_CALL_ARGS":
			f := calls[str("toolCallId")]["function"].(map[string]any)
			f["arguments"] = f["arguments"].(string) + str("delta")
		case "TOOL_CALL_RESULT":
			add(map[string]any{"id": str("messageId"), "role": "tool", "toolCallId": str("toolCallId"), "content": str("content")})
		case "REASONING_ENCRYPTED_VALUE":
			target := byID[str("entityId")]
			if str("subtype") == "tool-call" {
				target = calls[str("entityId")]
			}
			target["encryptedValue"] = str("encryptedValue")
		}
	}
	return msgs
}

// encryptedValues lists the encrypted values of messages and their calls,
// in order, and where each is.
func encryptedValues(msgs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if _, ok := m["encryptedValue"]; ok {
			out = append(out, m)
		}
		calls, _ := m["toolCalls"].([]any)
		for _, c := range calls {
			if c := c.(map[string]any); c["encryptedValue"] != nil {
				out = append(out, c)
			}
		}
	}
	return out
}

func sealedInput(thread string, msgs ...map[string]any) string {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = m
	}
	b, _ := json.Marshal(map[string]any{"threadId": thread, "runId": "run-" + strconv.Itoa(len(msgs)), "protocolVersion": "1.0", "messages": list})
	return string(b)
}

func bare(p cmf.Part) cmf.Part {
	switch p := p.(type) {
	case cmf.Thinking:
		p.Opaque = nil
		return p
	case cmf.Text:
		p.Opaque = nil
		return p
	case cmf.ToolCall:
		p.Opaque = nil
		return p
	}
	return p
}

// Without history, each part's provider values reach a 1.0 client
// sealed, in REASONING_ENCRYPTED_VALUE events (redacted thinking inside
// the value of the part after it), and, sent back as the encryptedValue
// of the messages and calls, reach the model on their parts again, the
// redacted thinking in its place. What the client alters or moves is
// dropped, and so is what follows it in its step.
func TestSealedValuesComeBackOnTheirParts(t *testing.T) {
	step1, step2 := testutil.SealedReply(1)
	for _, c := range []struct {
		name    string
		tamper  func(values []map[string]any)
		want    []cmf.Part
		refused int
	}{
		{name: "as sent", want: append(append([]cmf.Part(nil), step1...), step2...)},
		{name: "a value altered", tamper: func(v []map[string]any) {
			s := v[2]["encryptedValue"].(string)
			i := len(s) / 2
			v[2]["encryptedValue"] = s[:i] + map[bool]string{true: "B", false: "A"}[s[i] == 'A'] + s[i+1:]
		}, want: []cmf.Part{step1[0], step1[1], step1[2], bare(step1[3]), bare(step1[4]), step2[0]}, refused: 2},
		{name: "moved to another message", tamper: func(v []map[string]any) {
			v[4]["encryptedValue"] = v[2]["encryptedValue"]
		}, want: append(append([]cmf.Part(nil), step1...), bare(step2[0])), refused: 1},
		{name: "dropped", tamper: func(v []map[string]any) {
			delete(v[0], "encryptedValue")
		}, want: []cmf.Part{bare(step1[0]), bare(step1[2]), bare(step1[3]), bare(step1[4]), step2[0]}, refused: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, url, logs := sealingServer(t, "one secret")
			user := map[string]any{"id": "u1", "role": "user", "content": "Weather in Oslo?"}
			events := testutil.PostStream(t, url, sealedInput("sealed-thread", user))
			thread := threadOf(events)
			values := encryptedValues(thread)
			if len(values) != 5 {
				t.Fatalf("%d encrypted values, want 5 (each of step one's parts but the redacted one, and step two's text): %v", len(values), thread)
			}
			if c.tamper != nil {
				c.tamper(values)
			}
			next := append(append([]map[string]any{user}, thread...), map[string]any{"id": "u2", "role": "user", "content": "And tomorrow?"})
			testutil.PostStream(t, url, sealedInput("sealed-thread", next...))
			in := a.Inputs()[1]
			if got := testutil.AssistantParts(in.History, in.Messages); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("the model got\n%+v\nwant\n%+v", got, c.want)
			}
			if n := strings.Count(logs.String(), `"dropped sealed provider values that did not open"`); (n == 1) != (c.refused > 0) ||
				c.refused > 0 && !strings.Contains(logs.String(), `count=`+strconv.Itoa(c.refused)) {
				t.Fatalf("want %d refused; log:\n%s", c.refused, logs)
			}
		})
	}
}

// A pre-1.0 client gets no encrypted values (its schema may not know the
// event); with history nobody does: the server keeps the values.
func TestEncryptedValuesOnlyWithoutHistoryFor1_0(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    []uiadapter.Option
		version string
		want    int
	}{
		{"stateless 1.0", nil, "1.0", 5},
		{"stateless pre-1.0", nil, "", 0},
		{"history", []uiadapter.Option{uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope)}, "1.0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, url, _ := sealingServer(t, "one secret", c.opts...)
			body, _ := json.Marshal(map[string]any{"threadId": "t-" + strings.ReplaceAll(c.name, " ", "-"), "runId": "r1", "protocolVersion": c.version,
				"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "Weather?"}}})
			events := testutil.PostStream(t, url, string(body))
			n := 0
			for _, e := range events {
				if e["type"] == "REASONING_ENCRYPTED_VALUE" {
					n++
				}
			}
			if n != c.want {
				t.Fatalf("%d REASONING_ENCRYPTED_VALUE events, want %d", n, c.want)
			}
		})
	}
}
