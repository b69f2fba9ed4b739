// Command example serves Genkit Go generation through agentui: a model
// with two Genkit tools, get_weather and delete_file (which asks the
// person first: genkitagent.Approval), on both protocols, with the chat
// page. Its model is agentui's demo model as a Genkit model
// (deterministic, offline); put a Genkit plugin's model in its place.
//
// With -redis, history and the runs' log live in Redis, so replicas that
// share it (and -secret) resume and stop each other's replies and answer
// each other's approvals (a Genkit run keeps no state of its own between
// turns: the conversation is all a resume needs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agentui/agentui"
	genkitagent "github.com/agentui/agentui/adapters/genkit"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/uiadapter"
	"github.com/agentui/agentui/webui"
)

type weatherIn struct {
	City string `json:"city"`
}

type weather struct {
	City         string `json:"city"`
	Forecast     string `json:"forecast"`
	TemperatureC int    `json:"temperature_c"`
}

type deleteIn struct {
	Path string `json:"path"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "address to listen on")
	redisURL := flag.String("redis", "", "a Redis URL (redis://host:port/db): history and runs shared by replicas; empty: in memory")
	prefix := flag.String("prefix", "agentui-genkit:", "prefix of the Redis keys")
	secret := flag.String("secret", "", "signs approvals (replicas share one); random when empty")
	delay := flag.Duration("demo-delay", 20*time.Millisecond, "pause between the demo model's words")
	flag.Parse()

	// genkit.Init takes SIGINT and SIGTERM for a context of its own and
	// never lets go: the server handles them itself, here.
	g := genkit.Init(context.Background())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	model := genkitagent.DefineModel(g, "agentui/demo", demo.New(demo.WithWordDelay(*delay)))
	weatherTool := genkit.DefineTool(g, "get_weather", "Get the weather forecast for a city.",
		func(_ *ai.ToolContext, in weatherIn) (weather, error) {
			return weather{City: in.City, Forecast: "sunny", TemperatureC: 21}, nil
		})
	deleteTool := genkit.DefineTool(g, "delete_file", "Delete a file. Needs the user's approval.",
		func(tc *ai.ToolContext, in deleteIn) (map[string]string, error) {
			if err := genkitagent.Approval(tc); err != nil {
				return nil, err
			}
			return map[string]string{"deleted": in.Path}, nil
		})
	a, err := genkitagent.New(g, genkitagent.Config{Model: model, Tools: []ai.ToolRef{weatherTool, deleteTool}})
	if err != nil {
		log.Fatal(err)
	}

	opts := []uiadapter.Option{uiadapter.WithScope(uiadapter.SingleScope)}
	if *secret != "" {
		opts = append(opts, uiadapter.WithSecret([]byte(*secret)))
	}
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
	}
	api, err := agentui.New(a, opts...)
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
	srv := &http.Server{Handler: mux}
	fmt.Printf("genkit example listening on http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = api.Shutdown(shutdown)
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
