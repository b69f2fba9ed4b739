// Command example serves an Eino agent through agentui: an Eino ADK
// ChatModelAgent with two Eino tools, get_weather and delete_file (which
// asks the person first: einoagent.NeedsApproval), on both protocols,
// with the chat page. Its model is agentui's demo model as an Eino chat
// model (deterministic, offline); put a real Eino model in its place.
//
// With -redis, history, the runs' log and Eino's checkpoints live in
// Redis, so replicas that share it (and -secret) resume and stop each
// other's replies and answer each other's approvals.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agentui/agentui"
	einoagent "github.com/agentui/agentui/adapters/eino"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"description=the city"`
}

type weather struct {
	City         string `json:"city"`
	Forecast     string `json:"forecast"`
	TemperatureC int    `json:"temperature_c"`
}

type deleteIn struct {
	Path string `json:"path" jsonschema:"description=the file to delete"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "address to listen on")
	redisURL := flag.String("redis", "", "a Redis URL (redis://host:port/db): history, runs and checkpoints shared by replicas; empty: in memory")
	prefix := flag.String("prefix", "agentui-eino:", "prefix of the Redis keys")
	secret := flag.String("secret", "", "signs approvals (replicas share one); random when empty")
	delay := flag.Duration("demo-delay", 20*time.Millisecond, "pause between the demo model's words")
	flag.Parse()
	ctx := context.Background()

	weatherTool, err := utils.InferTool("get_weather", "Get the weather forecast for a city.",
		func(_ context.Context, in weatherIn) (weather, error) {
			return weather{City: in.City, Forecast: "sunny", TemperatureC: 21}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	deleteTool, err := utils.InferTool("delete_file", "Delete a file. Needs the user's approval.",
		func(_ context.Context, in deleteIn) (map[string]string, error) {
			return map[string]string{"deleted": in.Path}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	eino, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "A helpful assistant with tools.",
		Model: einoagent.ChatModel(demo.New(demo.WithWordDelay(*delay))),
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{
			Tools: []tool.BaseTool{weatherTool, einoagent.NeedsApproval(deleteTool)},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}

	opts := []uiadapter.Option{uiadapter.WithScope(uiadapter.SingleScope)}
	if *secret != "" {
		opts = append(opts, uiadapter.WithSecret([]byte(*secret)))
	}
	var checkpoints adk.CheckPointStore = einoagent.NewMemoryStore()
	if *redisURL == "" {
		opts = append(opts, uiadapter.WithStore(history.NewMemory()))
	} else {
		ro, err := goredis.ParseURL(*redisURL)
		if err != nil {
			log.Fatal(err)
		}
		rdb := goredis.NewClient(ro)
		runs, err := redisstore.NewRunLog(ctx, rdb, redisstore.WithRunLogPrefix(*prefix))
		if err != nil {
			log.Fatal(err)
		}
		opts = append(opts, uiadapter.WithStore(redisstore.New(rdb, redisstore.WithPrefix(*prefix))), uiadapter.WithRunLog(runs),
			uiadapter.WithReplayGuard(redisstore.NewReplayGuard(rdb, *prefix)))
		checkpoints = einoagent.NewRedisStore(rdb, *prefix+"eino:", 24*time.Hour)
	}
	api, err := agentui.New(einoagent.New(eino, einoagent.WithCheckPointStore(checkpoints)), opts...)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Mount(mux, "/api")
	mux.Handle("GET /", webui.Handler())
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("eino example listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
