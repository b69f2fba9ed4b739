package gemini

import "encoding/json"

// The Gemini API's JSON, as much of it as agentui sends and reads
// (generativelanguage v1beta, GenerateContentRequest and
// GenerateContentResponse). Requests are decoded strictly: a field the
// real API does not know is refused, as the real API refuses it.

// GenerateRequest is a streamGenerateContent request body.
type GenerateRequest struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        json.RawMessage   `json:"toolConfig,omitempty"`
	SafetySettings    json.RawMessage   `json:"safetySettings,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	CachedContent     string            `json:"cachedContent,omitempty"`
}

// Content is one turn of the conversation: "user" or "model".
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one piece of a content. ThoughtSignature is the base64 text of
// the signature's bytes, as it travels.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	ExecutableCode   json.RawMessage   `json:"executableCode,omitempty"`
	CodeExecResult   json.RawMessage   `json:"codeExecutionResult,omitempty"`
	VideoMetadata    json.RawMessage   `json:"videoMetadata,omitempty"`
	MediaResolution  json.RawMessage   `json:"mediaResolution,omitempty"`
}

// Blob is inline media: base64 data and its MIME type.
type Blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData is media the API fetches: a Files API URI, a public or signed
// HTTPS URL, a YouTube URL.
type FileData struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is a call the model made. In the Developer API it arrives
// whole: the arguments are never streamed in pieces.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a call's result, sent in a user content.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Tool is a set of function declarations or a built-in tool.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         json.RawMessage       `json:"googleSearch,omitempty"`
	URLContext           json.RawMessage       `json:"urlContext,omitempty"`
	CodeExecution        json.RawMessage       `json:"codeExecution,omitempty"`
}

// FunctionDeclaration declares a function: its parameters as the
// OpenAPI subset (Parameters) or as JSON Schema (ParametersJSONSchema),
// never both.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	Response             json.RawMessage `json:"response,omitempty"`
	ResponseJSONSchema   json.RawMessage `json:"responseJsonSchema,omitempty"`
}

// GenerationConfig holds sampling and thinking settings.
type GenerationConfig struct {
	Temperature      *float64        `json:"temperature,omitempty"`
	TopP             *float64        `json:"topP,omitempty"`
	TopK             *float64        `json:"topK,omitempty"`
	MaxOutputTokens  *int64          `json:"maxOutputTokens,omitempty"`
	Seed             *int64          `json:"seed,omitempty"`
	StopSequences    []string        `json:"stopSequences,omitempty"`
	CandidateCount   *int64          `json:"candidateCount,omitempty"`
	ResponseMIMEType string          `json:"responseMimeType,omitempty"`
	ThinkingConfig   *ThinkingConfig `json:"thinkingConfig,omitempty"`
	PresencePenalty  *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64        `json:"frequencyPenalty,omitempty"`
}

// ThinkingConfig sets the reasoning: a token budget (2.5) or a level
// (3.x), and whether thought summaries are returned.
type ThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int64 `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// The response side.

type response struct {
	Candidates     []candidate     `json:"candidates,omitempty"`
	PromptFeedback *promptFeedback `json:"promptFeedback,omitempty"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata,omitempty"`
	ModelVersion   string          `json:"modelVersion"`
	ResponseID     string          `json:"responseId"`
}

type candidate struct {
	Content           *Content           `json:"content,omitempty"`
	FinishReason      string             `json:"finishReason,omitempty"`
	Index             int                `json:"index"`
	GroundingMetadata *groundingMetadata `json:"groundingMetadata,omitempty"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount,omitempty"`
}

type groundingMetadata struct {
	WebSearchQueries []string         `json:"webSearchQueries,omitempty"`
	GroundingChunks  []groundingChunk `json:"groundingChunks,omitempty"`
}

type groundingChunk struct {
	Web *webChunk `json:"web,omitempty"`
}

type webChunk struct {
	URI   string `json:"uri"`
	Title string `json:"title"`
}

// apiError is the error body of every Google API.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details,omitempty"`
}
