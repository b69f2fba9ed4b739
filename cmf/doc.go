// Package cmf implements the Common Message Format (CMF) v2: a provider- and
// protocol-agnostic message model that every other agentui package speaks.
//
// A [Message] is one turn of a conversation: a [Role], an ordered list of
// content [Part]s, an optional [Channel] and typed [Extensions]. Parts form a
// closed set of thirteen types ([Text], [Thinking], [RedactedThinking], [ToolCall], [ToolResult],
// [Resource], [ResourceRef], [PromptRequest], [PromptResult], [Image],
// [Video], [Audio], [Document]); the JSON discriminator "content_type" is
// derived from the Go type, so it cannot disagree with the payload.
//
// Extensions carry context (identity, security labels, HTTP headers,
// provenance, completion data) under the mutability tiers of the spec:
// immutable, monotonic, guarded and mutable. [CheckExtensionChange] enforces
// them on a before/after pair, and [Extensions.Clone] copies on write. The
// setters of [Message] ([Message.SetID], [Message.SetCallRecord], …) copy the
// extension they change too: a copy of a message shares its extensions, and
// a setter on the copy leaves the original as it was.
//
// [Message.Views] decomposes a message into one [View] per part: a read-only,
// capability-gated surface for policy engines, with a synthetic URI, a
// direction, a semantic action and helpers such as [View.MatchesURIPattern].
package cmf
