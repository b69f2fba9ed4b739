package cmf

import "fmt"

// SchemaVersion is the CMF schema version this package reads and writes.
const SchemaVersion = "2.0"

// Role says who is speaking. It is a closed set; decoding any other value fails.
type Role string

// The five CMF roles.
const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

var roles = map[Role]bool{RoleSystem: true, RoleDeveloper: true, RoleUser: true, RoleAssistant: true, RoleTool: true}

// Valid reports whether r is one of the five roles.
func (r Role) Valid() bool { return roles[r] }

// UnmarshalText rejects values outside the closed set.
func (r *Role) UnmarshalText(b []byte) error {
	return decodeEnum(r, b, roles, "role")
}

// Channel classifies what kind of output a message is. The zero value means
// an ordinary, unclassified message.
type Channel string

// The three CMF channels.
const (
	ChannelAnalysis   Channel = "analysis"
	ChannelCommentary Channel = "commentary"
	ChannelFinal      Channel = "final"
)

var channels = map[Channel]bool{"": true, ChannelAnalysis: true, ChannelCommentary: true, ChannelFinal: true}

// Valid reports whether c is empty or one of the three channels.
func (c Channel) Valid() bool { return channels[c] }

// UnmarshalText rejects values outside the closed set.
func (c *Channel) UnmarshalText(b []byte) error {
	return decodeEnum(c, b, channels, "channel")
}

// ContentType is the discriminator of a content part.
type ContentType string

// The thirteen content types.
const (
	ContentText     ContentType = "text"
	ContentThinking ContentType = "thinking"
	// ContentRedactedThinking is reasoning the provider sent encrypted.
	ContentRedactedThinking ContentType = "redacted_thinking"
	ContentToolCall         ContentType = "tool_call"
	ContentToolResult       ContentType = "tool_result"
	ContentResource         ContentType = "resource"
	ContentResourceRef      ContentType = "resource_ref"
	ContentPromptRequest    ContentType = "prompt_request"
	ContentPromptResult     ContentType = "prompt_result"
	ContentImage            ContentType = "image"
	ContentVideo            ContentType = "video"
	ContentAudio            ContentType = "audio"
	ContentDocument         ContentType = "document"
)

// SourceType says how media bytes are carried: by URL, inline as base64,
// or by reference to a file the server keeps.
type SourceType string

// The three media source types.
const (
	SourceURL    SourceType = "url"
	SourceBase64 SourceType = "base64"
	// SourceFile is a file the server keeps (package files): Data is its
	// id, and the bytes are read from the store when a model needs them.
	// History holds files so, never their bytes.
	SourceFile SourceType = "file"
)

var sourceTypes = map[SourceType]bool{SourceURL: true, SourceBase64: true, SourceFile: true}

// Valid reports whether s is "url", "base64" or "file".
func (s SourceType) Valid() bool { return sourceTypes[s] }

// UnmarshalText rejects anything but "url", "base64" and "file".
func (s *SourceType) UnmarshalText(b []byte) error {
	return decodeEnum(s, b, sourceTypes, "source type")
}

// ResourceType classifies a resource.
type ResourceType string

// The seven resource types.
const (
	ResourceFile     ResourceType = "file"
	ResourceBlob     ResourceType = "blob"
	ResourceURI      ResourceType = "uri"
	ResourceDatabase ResourceType = "database"
	ResourceAPI      ResourceType = "api"
	ResourceMemory   ResourceType = "memory"
	ResourceArtifact ResourceType = "artifact"
)

var resourceTypes = map[ResourceType]bool{
	ResourceFile: true, ResourceBlob: true, ResourceURI: true, ResourceDatabase: true,
	ResourceAPI: true, ResourceMemory: true, ResourceArtifact: true,
}

// Valid reports whether t is one of the seven resource types.
func (t ResourceType) Valid() bool { return resourceTypes[t] }

// UnmarshalText rejects values outside the closed set.
func (t *ResourceType) UnmarshalText(b []byte) error {
	return decodeEnum(t, b, resourceTypes, "resource type")
}

// StopReason says why a model or an agent run stopped.
//
// CMF v2 names five reasons (end, return, call, max_tokens, stop_sequence).
// An agent run can also stop for reasons a single model call cannot (it was
// aborted, it failed, it paused for approval, it hit the step limit); those
// come from the agent runtime's stop reasons and are part of the same closed
// set so that a stored message records exactly why it ended.
type StopReason string

// Stop reasons. The first five are CMF v2's; the rest are the agent
// runtime's additions.
const (
	StopEnd       StopReason = "end"
	StopReturn    StopReason = "return"
	StopCall      StopReason = "call"
	StopMaxTokens StopReason = "max_tokens"
	StopSequence  StopReason = "stop_sequence"
	StopError     StopReason = "error"
	StopAborted   StopReason = "aborted"
	StopMaxTurns  StopReason = "max_turns"
	StopUserStop  StopReason = "user_stop"
	StopHandoff   StopReason = "handoff"
	StopGuardrail StopReason = "guardrail"
	StopCompacted StopReason = "context_compacted"
	StopPaused    StopReason = "paused"
	// StopRefusal: the model declined to answer (a refusal, a safety
	// filter).
	StopRefusal StopReason = "refusal"
	// StopPauseTurn: the provider paused a long turn (Anthropic's
	// pause_turn, during server-side tools); the loop calls the model
	// again to let it go on.
	StopPauseTurn StopReason = "pause_turn"
)

var stopReasons = map[StopReason]bool{
	StopEnd: true, StopReturn: true, StopCall: true, StopMaxTokens: true, StopSequence: true,
	StopError: true, StopAborted: true, StopMaxTurns: true, StopUserStop: true, StopHandoff: true,
	StopGuardrail: true, StopCompacted: true, StopPaused: true, StopRefusal: true, StopPauseTurn: true,
}

// Valid reports whether s is one of the stop reasons.
func (s StopReason) Valid() bool { return stopReasons[s] }

// UnmarshalText rejects values outside the closed set.
func (s *StopReason) UnmarshalText(b []byte) error {
	return decodeEnum(s, b, stopReasons, "stop reason")
}

// SubjectType says what kind of entity a security subject is.
type SubjectType string

// The four subject types.
const (
	SubjectUser    SubjectType = "user"
	SubjectAgent   SubjectType = "agent"
	SubjectService SubjectType = "service"
	SubjectSystem  SubjectType = "system"
)

var subjectTypes = map[SubjectType]bool{SubjectUser: true, SubjectAgent: true, SubjectService: true, SubjectSystem: true}

// Valid reports whether t is one of the four subject types.
func (t SubjectType) Valid() bool { return subjectTypes[t] }

// UnmarshalText rejects values outside the closed set.
func (t *SubjectType) UnmarshalText(b []byte) error {
	return decodeEnum(t, b, subjectTypes, "subject type")
}

func decodeEnum[T ~string](dst *T, b []byte, set map[T]bool, what string) error {
	v := T(b)
	if !set[v] {
		return fmt.Errorf("cmf: unknown %s %q", what, string(b))
	}
	*dst = v
	return nil
}
