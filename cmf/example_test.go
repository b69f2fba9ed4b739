package cmf_test

import (
	"encoding/json"
	"fmt"

	"github.com/agentui/agentui/cmf"
)

// Build an assistant message that thinks, answers and calls a tool, and
// write it as CMF JSON.
func Example() {
	msg := cmf.Message{
		Role: cmf.RoleAssistant,
		Content: []cmf.Part{
			cmf.Thinking{Text: "The user wants the weather."},
			cmf.Text{Text: "Let me check."},
			cmf.ToolCall{ToolCallID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		},
	}
	msg.SetID("msg-42")
	if err := msg.Validate(); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(msg)
	fmt.Println(string(b))
	// Output:
	// {"schema_version":"2.0","role":"assistant","content":[{"content_type":"thinking","text":"The user wants the weather."},{"content_type":"text","text":"Let me check."},{"content_type":"tool_call","tool_call_id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}],"extensions":{"provenance":{"message_id":"msg-42"}}}
}

// Iterate the views of a message: one per part, each with its kind,
// direction, action and synthetic URI.
func ExampleMessage_Views() {
	msg := cmf.Message{
		Role: cmf.RoleAssistant,
		Content: []cmf.Part{
			cmf.Text{Text: "Looking that up."},
			cmf.ToolCall{ToolCallID: "c1", Name: "execute_sql", Namespace: "db", Arguments: json.RawMessage(`{"query":"SELECT 1"}`)},
		},
	}
	views, err := msg.Views(0)
	if err != nil {
		panic(err)
	}
	for _, v := range views {
		content, _ := v.Content()
		fmt.Printf("%s pre=%v action=%s uri=%q content=%s\n", v.Kind(), v.IsPre(), v.Action(), v.URI(), content)
	}
	// Output:
	// text pre=false action=send uri="" content=Looking that up.
	// tool_call pre=true action=execute uri="tool://db/execute_sql" content={"query":"SELECT 1"}
}

// A policy check: deleting files needs the files.delete permission. The
// view only reveals permissions to a consumer that declared read_permissions.
func ExampleView_MatchesURIPattern() {
	msg := cmf.Message{
		Role: cmf.RoleAssistant,
		Content: []cmf.Part{
			cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Namespace: "fs", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)},
			cmf.ToolCall{ToolCallID: "c2", Name: "read_file", Namespace: "fs", Arguments: json.RawMessage(`{"path":"/tmp/y"}`)},
		},
		Extensions: &cmf.Extensions{Security: &cmf.SecurityExtension{
			Subject: &cmf.SubjectExtension{ID: "bob", Type: cmf.SubjectUser, Permissions: []string{"files.read"}},
		}},
	}
	views, _ := msg.Views(cmf.CapReadSubject | cmf.CapReadPermissions)
	for _, v := range views {
		allowed := true
		if v.IsPre() && v.MatchesURIPattern("tool://fs/delete_*") {
			allowed = v.HasPermission("files.delete")
		}
		path, _ := v.GetArg("path")
		fmt.Printf("%s %s allowed=%v\n", v.Name(), path, allowed)
	}
	// Output:
	// delete_file "/tmp/x" allowed=false
	// read_file "/tmp/y" allowed=true
}

// A consumer returns a changed copy; the pipeline accepts it only if the
// mutability tiers allow the change.
func ExampleCheckExtensionChange() {
	before := &cmf.Extensions{Security: &cmf.SecurityExtension{Labels: []string{"PII"}}}

	after := before.Clone()
	after.Security.Labels = append(after.Security.Labels, "FINANCIAL")
	fmt.Println(cmf.CheckExtensionChange(before, after, 0))

	after = before.Clone()
	after.Security.Labels = nil
	fmt.Println(cmf.CheckExtensionChange(before, after, 0))
	// Output:
	// <nil>
	// cmf: monotonic extension security.labels: label PII removed
}
