module github.com/agentui/agentui

go 1.26
