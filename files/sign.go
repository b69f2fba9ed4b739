package files

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"
)

// signer signs file URLs: a URL is good until its expiry, and only for
// the scope it was signed for, so a link that leaks is useless to anyone
// else and soon to everyone.
type signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func (s signer) mac(scope, id string, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("agentui-file\x00"))
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write([]byte(id))
	m.Write([]byte{0})
	m.Write(strconv.AppendInt(nil, exp, 10))
	return m.Sum(nil)
}

// sign returns the query that makes a URL of id good for scope for ttl.
func (s signer) sign(scope, id string) string {
	exp := s.now().Add(s.ttl).Unix()
	return "exp=" + strconv.FormatInt(exp, 10) + "&sig=" + base64.RawURLEncoding.EncodeToString(s.mac(scope, id, exp))
}

// verify reports whether exp and sig (a URL's query) are good for scope
// and id now.
func (s signer) verify(scope, id, exp, sig string) bool {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || s.now().Unix() > e {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	return err == nil && hmac.Equal(got, s.mac(scope, id, e))
}
