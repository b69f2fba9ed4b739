package agent

import (
	"context"
	"encoding/json"

	"github.com/agentui/agentui/cmf"
)

// Point is where a [Guard] is consulted.
type Point uint8

// The guard points, in the order a turn meets them.
const (
	// PointInput is a new user message, before the model sees it or it is
	// stored. A handler consults it; the loop does not.
	PointInput Point = iota + 1
	// PointPreTool is a tool call, before it is approved, handed to the
	// client or run (and before its final arguments are streamed).
	PointPreTool
	// PointPostTool is a tool result, before the model or the user sees it.
	PointPostTool
	// PointOutput is a finished text part of the model's, before it is
	// stored. A guard that guards it holds the part's text back until it
	// is decided: the part streams in one piece.
	PointOutput
)

var pointNames = [...]string{PointInput: "input", PointPreTool: "pre_tool", PointPostTool: "post_tool", PointOutput: "output"}

func (p Point) String() string {
	if int(p) < len(pointNames) && pointNames[p] != "" {
		return pointNames[p]
	}
	return "unknown"
}

// Guard decides, at each [Point], whether what a run takes in, calls and
// puts out may pass, and how: a policy engine (package policy) is one.
// [Input].Guard gives a run its guard; nil costs nothing.
type Guard interface {
	// Guards reports whether Check wants to see point p; the loop skips
	// the points it does not guard (and streams text as it comes).
	Guards(p Point) bool
	// Check decides one message. An error fails closed: the loop treats
	// it as a denial whose reason says no more than that a policy failed.
	Check(ctx context.Context, c *Check) (Verdict, error)
}

// Check is one message a [Guard] decides. Message is read-only: a guard
// that redacts returns a changed copy in [Verdict].Message. For the
// loop's points it holds one part (the call, the result or the text)
// with the extensions the stored message gets; for PointInput it is the
// user's message.
type Check struct {
	Point   Point
	Message *cmf.Message
	Tool    string // the tool's name, at PointPreTool and PointPostTool
}

// Verdict is a [Guard]'s decision.
type Verdict struct {
	// Deny, when not empty, refuses the message with this reason, which
	// the user sees (and the model, as the tool's error): a denied call
	// never runs or asks for approval, a denied result or text is
	// replaced by a note that says a policy withheld it.
	Deny string
	// Message, when not nil, replaces the checked message: a redacted
	// copy, the same role and parts (the guard checks the mutability
	// tiers before it returns one).
	Message *cmf.Message
	// Labels are security labels to add to the message that is stored.
	Labels []string
	// RequireApproval turns the call (PointPreTool) into one that waits
	// for the user's approval, though its tool does not ask for it.
	RequireApproval bool
}

// PolicyFailed is the denial reason the user sees when a guard fails.
const PolicyFailed = "a policy could not be evaluated"

// guardCheck asks g about one message, failing closed.
func guardCheck(ctx context.Context, g Guard, c *Check) Verdict {
	v, err := g.Check(ctx, c)
	if err != nil {
		return Verdict{Deny: PolicyFailed}
	}
	return v
}

// checkMessage is the one-part message a guard sees at a loop point.
func checkMessage(role cmf.Role, id string, p cmf.Part, ext *cmf.Extensions) *cmf.Message {
	m := &cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: role, Content: []cmf.Part{p}, Extensions: ext}
	if id != "" {
		m.SetID(id)
	}
	return m
}

// onlyPart returns the single part of a guard's replacement message, if
// it is of the type T.
func onlyPart[T cmf.Part](m *cmf.Message) (T, bool) {
	var zero T
	if m == nil || len(m.Content) != 1 {
		return zero, false
	}
	p, ok := m.Content[0].(T)
	return p, ok
}

// policyDenied is a denied call's or result's output as the model sees it.
func policyDenied(what, reason string) json.RawMessage {
	return jsonString(what + " denied by policy: " + reason)
}
