// Package conformance runs the real JavaScript clients (the AI SDK's Chat
// class and stream tools; AG-UI's HttpAgent and verifyEvents) against the
// agentui server. The JavaScript side lives in js/ (npm ci installs it);
// these Go tests start the server and drive it. The flows of one server
// run in one Node process (js/flows.mjs), each flow still a subtest of its
// own: `go test ./conformance -run 'TestAGUI$/history/steer$'` runs that
// flow alone.
package conformance
