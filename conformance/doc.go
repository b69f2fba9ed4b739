// Package conformance runs the real JavaScript clients (the AI SDK's Chat
// class and stream tools; AG-UI's HttpAgent and verifyEvents) against the
// agentui server. The JavaScript side lives in js/ (npm ci installs it);
// these Go tests start the server and drive it.
package conformance
