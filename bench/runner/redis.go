package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// respConn is the few Redis commands the runner needs (PING, INFO, SCAN,
// DEL) over RESP: a dozen lines instead of a client library in the
// module's dependencies for a benchmark's housekeeping.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

// dialRedis connects to the Redis of a redis:// URL and selects its
// database.
func dialRedis(rawURL string) (*respConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "redis" {
		return nil, fmt.Errorf("the runner speaks plain redis:// only, not %s://", u.Scheme)
	}
	c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		return nil, err
	}
	rc := &respConn{c: c, r: bufio.NewReader(c)}
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		if _, err := rc.do("SELECT", db); err != nil {
			c.Close()
			return nil, err
		}
	}
	return rc, nil
}

func (rc *respConn) Close() error { return rc.c.Close() }

// do sends one command and reads its reply: a string, an int64, nil, or
// a []any of those.
func (rc *respConn) do(args ...string) (any, error) {
	_ = rc.c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(rc.c, b.String()); err != nil {
		return nil, err
	}
	return rc.reply()
}

func (rc *respConn) reply() (any, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty RESP reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, errors.New(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = rc.reply(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected RESP reply %q", line)
}

// redisPing checks that a Redis server answers PING at the URL.
func redisPing(rawURL string) error {
	rc, err := dialRedis(rawURL)
	if err != nil {
		return err
	}
	defer rc.Close()
	v, err := rc.do("PING")
	if err != nil {
		return err
	}
	if v != "PONG" {
		return fmt.Errorf("PING answered %v", v)
	}
	return nil
}

// redisVersion asks the Redis server for its version, or says why it
// could not.
func redisVersion(rawURL string) string {
	if !strings.HasPrefix(rawURL, "redis://") {
		return "not used"
	}
	rc, err := dialRedis(rawURL)
	if err != nil {
		return "not reachable"
	}
	defer rc.Close()
	v, err := rc.do("INFO", "server")
	info, ok := v.(string)
	if err != nil || !ok {
		return "unknown"
	}
	for _, line := range strings.Split(info, "\n") {
		if ver, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return ver
		}
	}
	return "unknown"
}

// redisDeleteMatching deletes the keys matching pattern (SCAN, then DEL)
// and returns how many it deleted. S4 uses it to remove the conversations
// it created: agentui keeps them without expiry by default, and every
// `make bench` would otherwise leave a few megabytes behind.
func redisDeleteMatching(rawURL, pattern string) (int, error) {
	rc, err := dialRedis(rawURL)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	deleted, cursor := 0, "0"
	for {
		v, err := rc.do("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
		if err != nil {
			return deleted, err
		}
		page, ok := v.([]any)
		if !ok || len(page) != 2 {
			return deleted, fmt.Errorf("unexpected SCAN reply %v", v)
		}
		cursor, _ = page[0].(string)
		keys, _ := page[1].([]any)
		if len(keys) > 0 {
			args := []string{"DEL"}
			for _, k := range keys {
				if s, ok := k.(string); ok {
					args = append(args, s)
				}
			}
			n, err := rc.do(args...)
			if err != nil {
				return deleted, err
			}
			if n, ok := n.(int64); ok {
				deleted += int(n)
			}
		}
		if cursor == "0" || cursor == "" {
			return deleted, nil
		}
	}
}
