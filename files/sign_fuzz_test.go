package files

import (
	"bytes"
	"testing"
	"time"
)

// No query a client makes up reads a file: only the signature the
// server made for that scope, id and expiry verifies; and a file id is
// never something a path could be built from.
func FuzzSignedQuery(f *testing.F) {
	s := signer{key: bytes.Repeat([]byte("k"), 32), ttl: time.Minute, now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	good := "sha256-" + string(bytes.Repeat([]byte("a"), 64))
	f.Add("alice", good, "1800000060", "sig")
	f.Add("bob", "../etc/passwd", "-1", "")
	f.Add("", "sha256-", "99999999999999999999", "====")
	f.Fuzz(func(t *testing.T, scope, id, exp, sig string) {
		if s.verify(scope, id, exp, sig) {
			want := s.sign(scope, id)
			if want != "exp="+exp+"&sig="+sig {
				t.Fatalf("a made-up query verified: %q %q %q %q", scope, id, exp, sig)
			}
		}
		if ValidID(id) && (bytes.ContainsAny([]byte(id), "/\\.") || len(id) != len(good)) {
			t.Fatalf("a path-like id is valid: %q", id)
		}
	})
}
