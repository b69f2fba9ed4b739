// Package edge is the HTTP edge in front of agentui's handlers: which
// Host names the server answers to ([AllowHosts]), which pages on other
// origins may call it ([CORS]), and the refusal of state-changing requests
// that browsers send from any other page ([RefuseCrossSite]). Each is
// plain net/http middleware; the chat handlers apply the cross-site rule
// themselves, so it holds even where an app forgets the middleware.
package edge
