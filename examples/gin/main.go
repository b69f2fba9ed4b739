// Command gin mounts agentui on a gin router group, behind gin's logger,
// recovery and an authentication middleware: each user's conversations
// are scoped to them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"

	"github.com/agentui/agentui"
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
	"github.com/gin-gonic/gin"
)

// users stands in for your user database: bearer token → user id.
var users = map[string]string{"alice-token": "alice", "bob-token": "bob"}

type userKey struct{}

// authenticate is ordinary gin middleware: it rejects unknown tokens and
// puts the user in the request's context, where the scope function finds
// it.
func authenticate(c *gin.Context) {
	token := strings.TrimPrefix(c.GetHeader("Authorization"), "Bearer ")
	user, ok := users[token]
	if !ok {
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "unknown token"})
		return
	}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), userKey{}, user))
	c.Next()
}

// scope gives each user their own conversations.
func scope(r *http.Request) (string, error) {
	if user, ok := r.Context().Value(userKey{}).(string); ok {
		return user, nil
	}
	return "", errors.New("not authenticated")
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "address to listen on")
	flag.Parse()

	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		log.Fatal(err)
	}
	api, err := agentui.New(loop,
		uiadapter.WithStore(history.NewMemory()),
		uiadapter.WithScope(scope),
	)
	if err != nil {
		log.Fatal(err)
	}

	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Logger(), gin.Recovery())
	mountGin(r.Group("", authenticate), api.Routes("/api"))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("gin example listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, r))
}

// mountGin puts agentui's routes on a gin router. gin names the chat id
// ":id" and keeps it itself; agentui's handlers read net/http's path
// value "id", so each route copies it there.
func mountGin(r gin.IRoutes, routes []agentui.Route) {
	for _, rt := range routes {
		h := rt.Handler
		r.Handle(rt.Method, strings.ReplaceAll(rt.Path, "{id}", ":id"), func(c *gin.Context) {
			if id := c.Param("id"); id != "" {
				c.Request.SetPathValue("id", id)
			}
			h.ServeHTTP(c.Writer, c.Request)
		})
	}
}
