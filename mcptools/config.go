package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Config is a file of MCP servers, as the binary's -mcp flag reads it:
//
//	{"servers": [
//	  {"name": "files", "command": ["mcp-files", "/srv/data"], "approval": "always"},
//	  {"name": "search", "url": "https://search.example.com/mcp",
//	   "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}, "timeout": "20s"}
//	]}
//
// ${VAR} in a header, an env entry or a command argument is the
// environment's VAR, so a file holds no secret. approval is
// "unless-read-only" (the default), "always" or "never"; timeout is a
// call's bound (DefaultCallTimeout when absent); tools, when given, are
// the only ones offered.
type Config struct {
	Servers []Server `json:"servers"`
}

// configServer is Server as a file spells it.
type configServer struct {
	Server
	Approval string `json:"approval"`
	Timeout  string `json:"timeout"`
}

// ParseConfig reads a Config; unknown fields are errors (a misspelt key
// would otherwise be a setting silently not applied).
func ParseConfig(data []byte) ([]Server, error) {
	var raw struct {
		Servers []configServer `json:"servers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("mcptools: config: %w", err)
	}
	if len(raw.Servers) == 0 {
		return nil, errors.New(`mcptools: config: no servers (want {"servers": [...]})`)
	}
	out := make([]Server, 0, len(raw.Servers))
	for i, c := range raw.Servers {
		s := c.Server
		switch c.Approval {
		case "", "unless-read-only":
			s.Approval = ApproveUnlessReadOnly
		case "always":
			s.Approval = ApproveAlways
		case "never":
			s.Approval = ApproveNever
		default:
			return nil, fmt.Errorf("mcptools: config: server %d: approval %q: want unless-read-only, always or never", i+1, c.Approval)
		}
		if c.Timeout != "" {
			d, err := time.ParseDuration(c.Timeout)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("mcptools: config: server %d: timeout %q: want a positive duration such as 30s", i+1, c.Timeout)
			}
			s.CallTimeout = d
		}
		var missing []string
		expand := func(v string) string {
			return os.Expand(v, func(name string) string {
				val, ok := os.LookupEnv(name)
				if !ok {
					missing = append(missing, name)
				}
				return val
			})
		}
		for k, v := range s.Headers {
			s.Headers[k] = expand(v)
		}
		for j := range s.Env {
			s.Env[j] = expand(s.Env[j])
		}
		for j := range s.Command {
			s.Command[j] = expand(s.Command[j])
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("mcptools: config: server %d: environment variables not set: %s", i+1, strings.Join(missing, ", "))
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("mcptools: config: server %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}
