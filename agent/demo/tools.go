package demo

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/agentui/agentui/agent"
)

// WeatherInput is get_weather's input.
type WeatherInput struct {
	City string `json:"city" jsonschema:"the city to get the weather for"`
}

// Weather is get_weather's result.
type Weather struct {
	City         string `json:"city"`
	Forecast     string `json:"forecast"`
	TemperatureC int    `json:"temperature_c"`
}

// DeleteInput is delete_file's input.
type DeleteInput struct {
	Path string `json:"path" jsonschema:"the path of the file to delete"`
}

// ResearchInput is research's input.
type ResearchInput struct {
	Topic string `json:"topic" jsonschema:"what to research"`
}

// Research is research's result.
type Research struct {
	Topic   string `json:"topic"`
	Summary string `json:"summary"`
	Sources int    `json:"sources"`
}

// ResearchProgress is one of research's progress updates.
type ResearchProgress struct {
	Step   int    `json:"step"`
	Of     int    `json:"of"`
	Status string `json:"status"`
}

// ResearchPause is how long research pauses after each progress update,
// so that a page shows them, also on a loaded machine.
const ResearchPause = 250 * time.Millisecond

// builtin names the tools Tools returns; "call <name>" never targets them.
var builtin = map[string]bool{"get_weather": true, "delete_file": true, "get_location": true, "research": true}

// Tools returns the four tools the demo grammar uses, for any model:
//
//   - get_weather, a server tool: always sunny and 21°C;
//   - delete_file, a server tool that needs the user's approval; it
//     deletes nothing and returns {"deleted": path};
//   - get_location, a client tool: the frontend supplies its output;
//   - research, a server tool that streams three progress updates
//     (agent.Emitter) and cites a source before its result.
func Tools() []agent.Tool {
	research := agent.FuncTool("research", "Research a topic; reports its progress while it works.",
		func(ctx context.Context, in ResearchInput) (Research, error) {
			for i, status := range []string{"Searching for " + in.Topic, "Reading 3 sources", "Summarizing"} {
				if err := agent.Emitter(ctx).Progress(ResearchProgress{Step: i + 1, Of: 3, Status: status}); err != nil {
					return Research{}, err
				}
				select {
				case <-time.After(ResearchPause):
				case <-ctx.Done():
					return Research{}, ctx.Err()
				}
			}
			if err := agent.Emitter(ctx).Source("https://example.com/research/"+url.PathEscape(in.Topic), in.Topic+": an overview"); err != nil {
				return Research{}, err
			}
			return Research{Topic: in.Topic, Summary: "3 sources agree that " + in.Topic + " is worth a closer look.", Sources: 3}, nil
		})
	weather := agent.FuncTool("get_weather", "Get the weather forecast for a city.",
		func(_ context.Context, in WeatherInput) (Weather, error) {
			return Weather{City: in.City, Forecast: "sunny", TemperatureC: 21}, nil
		})
	del := agent.FuncTool("delete_file", "Delete a file. Needs the user's approval.",
		func(_ context.Context, in DeleteInput) (map[string]string, error) {
			return map[string]string{"deleted": in.Path}, nil
		})
	del.NeedsApproval = agent.Always
	research.Idempotent, weather.Idempotent = true, true // they change nothing: a re-run is harmless
	location := agent.Tool{
		Name:        "get_location",
		Description: "Get the user's current location. The user's browser answers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}
	return []agent.Tool{weather, del, location, research}
}
