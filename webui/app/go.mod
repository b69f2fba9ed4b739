// This go.mod only keeps node_modules (which may hold .go files) out of the
// parent module's ./... patterns. There is no Go code here.
module github.com/agentui/agentui/webui/app

go 1.26
