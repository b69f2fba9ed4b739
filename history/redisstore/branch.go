package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	goredis "github.com/redis/go-redis/v9"
)

// Branches: the messages off a conversation's active branch live in one
// more key of its slot,
//
//	<prefix>{<scope>:<chat>}:tree   a hash: message id → {"parent", "seq", "message"}
//
// written by the script of the write that cuts them (an edit, a
// regeneration) or of a Switch, under the same version check.

var _ history.Brancher = (*Store)(nil)

// treeKey names the conversation's hash of off-branch messages.
func (s *Store) treeKey(k history.Key) string {
	return s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:tree"
}

// storedNode is a node as the tree hash holds it.
type storedNode struct {
	Parent  string          `json:"parent"`
	Seq     int64           `json:"seq"`
	Message json.RawMessage `json:"message"`
}

// encodeNodes turns nodes into the tree hash's field, value pairs.
func encodeNodes(nodes []history.Node) ([]any, error) {
	out := make([]any, 0, 2*len(nodes))
	for _, n := range nodes {
		m, err := json.Marshal(n.Message)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(storedNode{Parent: n.Parent, Seq: n.Seq, Message: m})
		if err != nil {
			return nil, err
		}
		out = append(out, n.Message.ID(), b)
	}
	return out, nil
}

// Branches returns the conversation's messages off its active branch,
// in the order they left it; one whose parent is on neither branch (its
// parent's branch was dropped) is not.
func (s *Store) Branches(ctx context.Context, key history.Key) ([]history.Node, error) {
	active, nodes, _, err := s.tree(ctx, key)
	if err != nil {
		return nil, err
	}
	return history.Reachable(active, nodes), nil
}

// tree reads the active branch and the other messages at one version.
func (s *Store) tree(ctx context.Context, key history.Key) ([]cmf.Message, []history.Node, history.Version, error) {
	for range 3 {
		conv, err := s.Load(ctx, key)
		if err != nil {
			return nil, nil, 0, err
		}
		msgsKey, verKey, _, _ := s.keys(key)
		var all *goredis.MapStringStringCmd
		var ver *goredis.StringCmd
		var n *goredis.IntCmd
		if _, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			all = p.HGetAll(ctx, s.treeKey(key))
			ver = p.Get(ctx, verKey)
			n = p.LLen(ctx, msgsKey)
			return nil
		}); err != nil && !errors.Is(err, goredis.Nil) {
			return nil, nil, 0, storeError("branches", err)
		}
		if v, _ := ver.Int64(); history.Version(v) != conv.Version || int(n.Val()) != len(conv.Messages) {
			continue // written in between: read both again
		}
		nodes := make([]history.Node, 0, len(all.Val()))
		for id, raw := range all.Val() {
			var sn storedNode
			if err := json.Unmarshal([]byte(raw), &sn); err != nil {
				return nil, nil, 0, fmt.Errorf("%w: branch %q: %w", errCorrupt, id, err)
			}
			var m cmf.Message
			if err := m.UnmarshalJSON(sn.Message); err != nil {
				return nil, nil, 0, fmt.Errorf("%w: branch %q: %w", errCorrupt, id, err)
			}
			nodes = append(nodes, history.Node{Message: m, Parent: sn.Parent, Seq: sn.Seq})
		}
		slices.SortStableFunc(nodes, func(a, b history.Node) int { return cmpSeq(a, b) })
		return conv.Messages, nodes, conv.Version, nil
	}
	return nil, nil, 0, history.ErrConflict
}

func cmpSeq(a, b history.Node) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// branchScript: KEYS msgs, ver, gen, meta, tree; ARGV expected version,
// ttl ms, keep, a derived title and the index of its message among the
// added ones (-1: none), the number of messages added (m), the messages,
// the number of nodes removed (r), their ids, then the nodes added as
// field, value pairs. Replies as the write script does.
var branchScript = goredis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v ~= tonumber(ARGV[1]) then return {-1, v} end
local n = redis.call('LLEN', KEYS[1])
local keep = tonumber(ARGV[3])
if keep > n then return {-2, n} end
if keep < n then
  if keep == 0 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], 0, keep - 1) end
  local at = tonumber(redis.call('HGET', KEYS[4], 'at') or '-1')
  if at >= 0 and keep <= at then redis.call('HDEL', KEYS[4], 'auto', 'at') end
end
local at = tonumber(ARGV[5])
if at >= 0 and redis.call('HEXISTS', KEYS[4], 'auto') == 0 then
  redis.call('HSET', KEYS[4], 'auto', ARGV[4], 'at', keep + at)
end
local i = 7
for j = 1, tonumber(ARGV[6]) do redis.call('RPUSH', KEYS[1], ARGV[i]); i = i + 1 end
local r = tonumber(ARGV[i]); i = i + 1
for j = 1, r do redis.call('HDEL', KEYS[5], ARGV[i]); i = i + 1 end
while i < #ARGV do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]); i = i + 2 end
` + bumpVersion)

// Switch makes the branch through id the active one: the conversation and
// its other messages are read, the new branch is worked out here, and
// one script writes it if the version has not moved.
func (s *Store) Switch(ctx context.Context, key history.Key, expect history.Version, id string) (history.Version, error) {
	active, nodes, v, err := s.tree(ctx, key)
	if err != nil {
		return 0, err
	}
	if v != expect {
		return 0, history.ErrConflict
	}
	nodes = history.Reachable(active, nodes)
	keep, add, left, err := history.SwitchPlan(active, nodes, id, int64(v)+1)
	if err != nil {
		return 0, err
	}
	left = history.Prune(append(active[:keep:keep], add...), left)
	return s.rewrite(ctx, key, expect, keep, add, nodes, left, "switch")
}

// rewrite writes a change of branches: keep of the active messages, add
// after them, and the tree from had to want.
func (s *Store) rewrite(ctx context.Context, key history.Key, expect history.Version, keep int, add []cmf.Message, had, want []history.Node, op string) (history.Version, error) {
	msgsKey, verKey, genKey, _ := s.keys(key)
	title, at := history.Title(add)
	args := []any{int64(expect), s.ttl.Milliseconds(), keep, title, at, len(add)}
	for _, m := range add {
		if err := m.Validate(); err != nil {
			return 0, err // never store what Load would refuse
		}
		b, err := json.Marshal(m)
		if err != nil {
			return 0, err
		}
		args = append(args, b)
	}
	kept := make(map[string]bool, len(want))
	for _, n := range want {
		kept[n.Message.ID()] = true
	}
	var gone []any
	for _, n := range had {
		if !kept[n.Message.ID()] {
			gone = append(gone, n.Message.ID())
		}
	}
	args = append(append(args, len(gone)), gone...)
	before := make(map[string]history.Node, len(had))
	for _, n := range had {
		before[n.Message.ID()] = n
	}
	fresh := slices.DeleteFunc(slices.Clone(want), func(n history.Node) bool {
		b, ok := before[n.Message.ID()]
		return ok && b.Parent == n.Parent && b.Seq == n.Seq
	})
	pairs, err := encodeNodes(fresh)
	if err != nil {
		return 0, err
	}
	args = append(args, pairs...)
	v, err := s.cas(ctx, op, branchScript, key, []string{msgsKey, verKey, genKey, s.metaKey(key), s.treeKey(key)}, args)
	s.cache.drop(key)
	return v, err
}

// branch is Write for a write that cuts: what it cuts is kept off the
// active branch.
func (s *Store) branch(ctx context.Context, key history.Key, expect history.Version, keep int, msgs []cmf.Message) (history.Version, error) {
	active, nodes, v, err := s.tree(ctx, key)
	if err != nil {
		return 0, err
	}
	if v != expect {
		return 0, history.ErrConflict
	}
	if keep > len(active) {
		return 0, fmt.Errorf("history/redisstore: write keeps %d messages of %d", keep, len(active))
	}
	nodes = history.Reachable(active, nodes)
	want := history.CutNodes(active, keep, msgs, nodes, int64(v)+1)
	want = history.Prune(append(active[:keep:keep], msgs...), want)
	return s.rewrite(ctx, key, expect, keep, msgs, nodes, want, "write")
}
