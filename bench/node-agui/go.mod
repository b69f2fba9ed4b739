// This stub module only keeps node_modules out of the parent module's ./...
// patterns: npm packages may ship .go files, and without this file
// `go list ./...`, `go vet ./...` and `go test ./...` would try to build them.
module github.com/agentui/agentui/bench/node-agui

go 1.26
