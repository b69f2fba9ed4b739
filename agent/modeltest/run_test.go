package modeltest

import (
	"strings"
	"testing"
)

// A harness that leaves out what the suite needs is refused before any
// subtest runs, saying what is missing.
func TestHarnessIsChecked(t *testing.T) {
	start := func(*testing.T) Backend { return nil }
	for _, tc := range []struct {
		h    Harness
		says string
	}{
		{Harness{Model: "m", Absent: map[Capability]string{ProviderValues: "none"}}, "needs Start and Model"},
		{Harness{Start: start, Absent: map[Capability]string{ProviderValues: "none"}}, "needs Start and Model"},
		{Harness{Start: start, Model: "m", Absent: map[Capability]string{ProviderValues: "none", Retries: " "}}, `Absent["retries"] needs the reason`},
		{Harness{Start: start, Model: "m", Absent: map[Capability]string{ProviderValues: "none", "streaming": "no"}}, `"streaming", which is not a capability`},
		{Harness{Start: start, Model: "m", Provider: "p"}, "needs a Provider, and an OtherModel"},
		{Harness{Start: start, Model: "m", Provider: "p", OtherModel: "m"}, "an OtherModel besides Model"},
		{Harness{Start: start, Model: "m", OtherModel: "n"}, "needs a Provider"},
	} {
		if err := tc.h.check(); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v; want it to say %q", tc.h, err, tc.says)
		}
	}
	ok := Harness{Start: start, Model: "m", Provider: "p", OtherModel: "n", Absent: map[Capability]string{CacheWrites: "the API reports none"}}
	if err := ok.check(); err != nil {
		t.Errorf("a whole harness: %v", err)
	}
}
