package demo

import (
	"context"
	"encoding/json"

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

// builtin names the tools Tools returns; "call <name>" never targets them.
var builtin = map[string]bool{"get_weather": true, "delete_file": true, "get_location": true}

// Tools returns the three tools the demo grammar uses, for any model:
//
//   - get_weather, a server tool: always sunny and 21°C;
//   - delete_file, a server tool that needs the user's approval; it
//     deletes nothing and returns {"deleted": path};
//   - get_location, a client tool: the frontend supplies its output.
func Tools() []agent.Tool {
	weather := agent.FuncTool("get_weather", "Get the weather forecast for a city.",
		func(_ context.Context, in WeatherInput) (Weather, error) {
			return Weather{City: in.City, Forecast: "sunny", TemperatureC: 21}, nil
		})
	del := agent.FuncTool("delete_file", "Delete a file. Needs the user's approval.",
		func(_ context.Context, in DeleteInput) (map[string]string, error) {
			return map[string]string{"deleted": in.Path}, nil
		})
	del.NeedsApproval = agent.Always
	location := agent.Tool{
		Name:        "get_location",
		Description: "Get the user's current location. The user's browser answers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}
	return []agent.Tool{weather, del, location}
}
