package limit

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestPeerAddr(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"203.0.113.7:5123", "203.0.113.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:1", "2001:db8:1:2::/64"}, // the same /64
		{"[::ffff:198.51.100.9]:80", "198.51.100.9"},                  // IPv4-mapped is IPv4
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"pipe", "pipe"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if got := PeerAddr(r); got != c.want {
			t.Errorf("PeerAddr(%q) = %q, want %q", c.remote, got, c.want)
		}
	}
}

func TestForwardedFor(t *testing.T) {
	trusted, err := ParsePrefixes("10.0.0.0/8, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := ForwardedFor(trusted...)
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"a proxy's client", "10.1.2.3:1", []string{"198.51.100.1"}, "198.51.100.1"},
		{"the client's own entries are not believed", "10.1.2.3:1", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"two proxies", "127.0.0.1:1", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"headers repeated", "127.0.0.1:1", []string{"6.6.6.6", "198.51.100.1", "10.9.9.9"}, "198.51.100.1"},
		{"an IPv6 client counts as its /64", "10.1.2.3:1", []string{"2001:db8::99"}, "2001:db8::/64"},
		{"not from a proxy: the header is ignored", "203.0.113.5:1", []string{"198.51.100.1"}, "203.0.113.5"},
		{"a proxy's own request", "10.1.2.3:1", nil, "10.1.2.3"},
		{"garbage where the proxy's entry should be", "10.1.2.3:1", []string{"198.51.100.1, nonsense"}, "10.1.2.3"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := addr(r); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParsePrefixes(t *testing.T) {
	got, err := ParsePrefixes(" 10.0.0.0/8,,::1, 192.168.1.77/24 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("192.168.1.0/24")}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("prefix %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParsePrefixes("10.0.0.0/8,proxy.local"); err == nil {
		t.Error("a name was taken as a prefix")
	}
}
