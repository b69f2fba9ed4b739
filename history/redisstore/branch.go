package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	goredis "github.com/redis/go-redis/v9"
)

// Branches: the messages off a conversation's active branch live in one
// more key of its slot,
//
//	<prefix>{<scope>:<chat>}:tree   a hash: message id → {"parent", "born", "message"}
//	<prefix>{<scope>:<chat>}:born   a hash: message id → history.Tree's Born (messages on the active branch)
//
// written by the script of the write that cuts them (an edit, a
// regeneration) or of a Switch, under the same version check.

var _ history.Brancher = (*Store)(nil)

// treeKey names the conversation's hash of off-branch messages.
func (s *Store) treeKey(k history.Key) string {
	return s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:tree"
}

// bornKey names the births of messages on the active branch.
func (s *Store) bornKey(k history.Key) string {
	return s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:born"
}

// storedNode is a node as the tree hash holds it.
type storedNode struct {
	Parent  string          `json:"parent"`
	Born    int64           `json:"born"`
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
		b, err := json.Marshal(storedNode{Parent: n.Parent, Born: n.Born, Message: m})
		if err != nil {
			return nil, err
		}
		out = append(out, n.Message.ID(), b)
	}
	return out, nil
}

// Branches returns what the conversation keeps beside its active branch;
// a message whose parent is on neither branch (its parent's branch was
// dropped) is not listed.
func (s *Store) Branches(ctx context.Context, key history.Key) (history.Tree, error) {
	active, t, _, err := s.tree(ctx, key)
	if err != nil {
		return history.Tree{}, err
	}
	return history.Prune(active, t), nil
}

// tree reads the active branch and the tree at one version.
func (s *Store) tree(ctx context.Context, key history.Key) ([]cmf.Message, history.Tree, history.Version, error) {
	for range 3 {
		conv, err := s.Load(ctx, key)
		if err != nil {
			return nil, history.Tree{}, 0, err
		}
		msgsKey, verKey, _, _ := s.keys(key)
		var all, born *goredis.MapStringStringCmd
		var ver *goredis.StringCmd
		var n *goredis.IntCmd
		if _, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			all = p.HGetAll(ctx, s.treeKey(key))
			born = p.HGetAll(ctx, s.bornKey(key))
			ver = p.Get(ctx, verKey)
			n = p.LLen(ctx, msgsKey)
			return nil
		}); err != nil && !errors.Is(err, goredis.Nil) {
			return nil, history.Tree{}, 0, storeError("branches", err)
		}
		if v, _ := ver.Int64(); history.Version(v) != conv.Version || int(n.Val()) != len(conv.Messages) {
			continue // written in between: read both again
		}
		t := history.Tree{Nodes: make([]history.Node, 0, len(all.Val()))}
		for id, raw := range all.Val() {
			var sn storedNode
			if err := json.Unmarshal([]byte(raw), &sn); err != nil {
				return nil, history.Tree{}, 0, fmt.Errorf("%w: branch %q: %w", errCorrupt, id, err)
			}
			var m cmf.Message
			if err := m.UnmarshalJSON(sn.Message); err != nil {
				return nil, history.Tree{}, 0, fmt.Errorf("%w: branch %q: %w", errCorrupt, id, err)
			}
			t.Nodes = append(t.Nodes, history.Node{Message: m, Parent: sn.Parent, Born: sn.Born})
		}
		slices.SortStableFunc(t.Nodes, func(a, b history.Node) int { return cmp.Compare(a.Born, b.Born) })
		for id, v := range born.Val() {
			b, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, history.Tree{}, 0, fmt.Errorf("%w: birth of %q: %w", errCorrupt, id, err)
			}
			if t.Born == nil {
				t.Born = map[string]int64{}
			}
			t.Born[id] = b
		}
		return conv.Messages, t, conv.Version, nil
	}
	return nil, history.Tree{}, 0, history.ErrConflict
}

// branchScript: KEYS msgs, ver, gen, meta, tree, born; ARGV expected
// version, ttl ms, keep, a derived title and the index of its message
// among the added ones (-1: none), then four counted lists: the messages
// added, the tree's fields removed, its field, value pairs set, the born
// fields removed, then the born field, value pairs set. Replies as the
// write script does.
var branchScript = goredis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v ~= tonumber(ARGV[1]) then return {-1, v} end
local n = redis.call('LLEN', KEYS[1])
local keep = tonumber(ARGV[3])
if keep > n then return {-2, n} end
` + cutAndTitle + `local i = 7
for j = 1, tonumber(ARGV[6]) do redis.call('RPUSH', KEYS[1], ARGV[i]); i = i + 1 end
local r = tonumber(ARGV[i]); i = i + 1
for j = 1, r do redis.call('HDEL', KEYS[5], ARGV[i]); i = i + 1 end
local p = tonumber(ARGV[i]); i = i + 1
for j = 1, p do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]); i = i + 2 end
local d = tonumber(ARGV[i]); i = i + 1
for j = 1, d do redis.call('HDEL', KEYS[6], ARGV[i]); i = i + 1 end
while i < #ARGV do redis.call('HSET', KEYS[6], ARGV[i], ARGV[i + 1]); i = i + 2 end
` + bumpVersion)

// Switch makes the branch through id the active one: the conversation and
// its tree are read, the new branch is worked out here, and one script
// writes it if the version has not moved.
func (s *Store) Switch(ctx context.Context, key history.Key, expect history.Version, id string) (history.Version, error) {
	active, had, v, err := s.tree(ctx, key)
	if err != nil {
		return 0, err
	}
	if v != expect {
		return 0, history.ErrConflict
	}
	t := history.Prune(active, had)
	keep, add, after, err := history.SwitchPlan(active, t, id, int64(v)+1)
	if err != nil {
		return 0, err
	}
	return s.rewrite(ctx, key, expect, keep, add, had, history.Prune(append(active[:keep:keep], add...), after), "switch")
}

// Branch is Write that keeps what it cuts off the active branch: the
// conversation and its tree are read, and one script writes both if the
// version has not moved. One that cuts nothing is a Write.
func (s *Store) Branch(ctx context.Context, key history.Key, expect history.Version, keep int, msgs ...cmf.Message) (history.Version, error) {
	if keep == history.KeepAll {
		return s.Write(ctx, key, expect, keep, msgs...)
	}
	active, had, v, err := s.tree(ctx, key)
	if err != nil {
		return 0, err
	}
	if v != expect {
		return 0, history.ErrConflict
	}
	if keep > len(active) {
		return 0, fmt.Errorf("history/redisstore: write keeps %d messages of %d", keep, len(active))
	}
	if keep == len(active) {
		return s.Write(ctx, key, expect, keep, msgs...)
	}
	want := history.CutNodes(active, keep, msgs, history.Prune(active, had), int64(v)+1)
	return s.rewrite(ctx, key, expect, keep, msgs, had, history.Prune(append(active[:keep:keep], msgs...), want), "write")
}

// rewrite writes a change of branches: keep of the active messages, add
// after them, and the tree from had to want.
func (s *Store) rewrite(ctx context.Context, key history.Key, expect history.Version, keep int, add []cmf.Message, had, want history.Tree, op string) (history.Version, error) {
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
	kept := make(map[string]bool, len(want.Nodes))
	for _, n := range want.Nodes {
		kept[n.Message.ID()] = true
	}
	var gone []any
	before := make(map[string]history.Node, len(had.Nodes))
	for _, n := range had.Nodes {
		before[n.Message.ID()] = n
		if !kept[n.Message.ID()] {
			gone = append(gone, n.Message.ID())
		}
	}
	args = append(append(args, len(gone)), gone...)
	fresh := slices.DeleteFunc(slices.Clone(want.Nodes), func(n history.Node) bool {
		b, ok := before[n.Message.ID()]
		return ok && b.Parent == n.Parent && b.Born == n.Born
	})
	pairs, err := encodeNodes(fresh)
	if err != nil {
		return 0, err
	}
	args = append(append(args, len(fresh)), pairs...)
	var unborn []any
	for id := range had.Born {
		if _, ok := want.Born[id]; !ok {
			unborn = append(unborn, id)
		}
	}
	args = append(append(args, len(unborn)), unborn...)
	for id, b := range want.Born {
		if old, ok := had.Born[id]; !ok || old != b {
			args = append(args, id, b)
		}
	}
	v, err := s.cas(ctx, op, branchScript, key, []string{msgsKey, verKey, genKey, s.metaKey(key), s.treeKey(key), s.bornKey(key)}, args)
	s.cache.drop(key)
	return v, err
}
