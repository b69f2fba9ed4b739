package cmf

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Capabilities is a set of declared consumer capabilities. Views expose an
// extension only to consumers that declared the capability to read it, and
// [CheckExtensionChange] lets only consumers with [CapWriteHeaders] change
// HTTP headers.
type Capabilities uint16

// The capabilities of CMF v2 §4.5 and §3.5.
const (
	CapReadSubject Capabilities = 1 << iota
	CapReadRoles
	CapReadPermissions
	CapReadTeams
	CapReadClaims
	CapReadHeaders
	CapWriteHeaders
	CapReadLabels
	CapReadAgent
	CapReadObjects
	CapReadData

	// CapAll is every capability; for trusted, in-process consumers.
	CapAll Capabilities = 1<<iota - 1
)

var capabilityNames = [...]string{
	"read_subject", "read_roles", "read_permissions", "read_teams", "read_claims",
	"read_headers", "write_headers", "read_labels", "read_agent", "read_objects", "read_data",
}

// Has reports whether every capability in want is in c.
func (c Capabilities) Has(want Capabilities) bool { return c&want == want }

// String lists the capability names, comma-separated.
func (c Capabilities) String() string {
	var names []string
	for i, n := range capabilityNames {
		if c&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// ParseCapabilities parses capability names ("read_roles", …).
func ParseCapabilities(names ...string) (Capabilities, error) {
	var c Capabilities
	for _, n := range names {
		i := slices.Index(capabilityNames[:], n)
		if i < 0 {
			return 0, fmt.Errorf("cmf: unknown capability %q", n)
		}
		c |= 1 << i
	}
	return c, nil
}

// Tier is an extension's mutability contract.
type Tier uint8

// The four mutability tiers.
const (
	TierImmutable Tier = iota + 1 // shared, never changed
	TierMonotonic                 // copied; elements may be added, never removed
	TierGuarded                   // copied; changes need a capability
	TierMutable                   // copied; anything goes
)

func (t Tier) String() string {
	switch t {
	case TierImmutable:
		return "immutable"
	case TierMonotonic:
		return "monotonic"
	case TierGuarded:
		return "guarded"
	case TierMutable:
		return "mutable"
	}
	return "unknown"
}

// extensionTiers maps each extension (and the nested security fields) to
// its tier, as in CMF v2 §3.2.
var extensionTiers = map[string]Tier{
	"request":          TierImmutable,
	"agent":            TierImmutable,
	"http":             TierGuarded,
	"security":         TierMonotonic,
	"security.subject": TierImmutable,
	"security.objects": TierImmutable,
	"security.data":    TierImmutable,
	"mcp":              TierImmutable,
	"completion":       TierImmutable,
	"provenance":       TierImmutable,
	"llm":              TierImmutable,
	"framework":        TierImmutable,
	"ui":               TierImmutable,
	"custom":           TierMutable,
}

// TierOf returns the tier of an extension by its JSON name ("http",
// "security.subject", …), or 0 for an unknown name.
func TierOf(extension string) Tier { return extensionTiers[extension] }

// TierViolation is the error [CheckExtensionChange] returns.
type TierViolation struct {
	Extension string // e.g. "security.labels"
	Tier      Tier
	Reason    string
}

func (e *TierViolation) Error() string {
	return "cmf: " + e.Tier.String() + " extension " + e.Extension + ": " + e.Reason
}

// CheckExtensionChange enforces the mutability tiers on a copy a consumer
// returns: after must differ from before only where the tiers allow, given
// the consumer's capabilities. It rejects a changed, added or removed
// immutable extension; a removed security label or a changed classification
// (classification has no defined order, so once set it is fixed); and any
// change to HTTP headers without [CapWriteHeaders]. Custom extensions are
// mutable and never checked.
func CheckExtensionChange(before, after *Extensions, caps Capabilities) error {
	if before == nil {
		before = &Extensions{}
	}
	if after == nil {
		after = &Extensions{}
	}
	immutable := []struct {
		name string
		b, a any
	}{
		{"request", before.Request, after.Request},
		{"agent", before.Agent, after.Agent},
		{"mcp", before.MCP, after.MCP},
		{"completion", before.Completion, after.Completion},
		{"provenance", before.Provenance, after.Provenance},
		{"llm", before.LLM, after.LLM},
		{"framework", before.Framework, after.Framework},
		{"ui", before.UI, after.UI},
	}
	for _, x := range immutable {
		if !reflect.DeepEqual(x.b, x.a) {
			return &TierViolation{Extension: x.name, Tier: TierImmutable, Reason: "changed"}
		}
	}
	if err := checkSecurity(before.Security, after.Security); err != nil {
		return err
	}
	var bh, ah map[string]string
	if before.HTTP != nil {
		bh = before.HTTP.Headers
	}
	if after.HTTP != nil {
		ah = after.HTTP.Headers
	}
	if !maps.Equal(bh, ah) && !caps.Has(CapWriteHeaders) {
		return &TierViolation{Extension: "http.headers", Tier: TierGuarded, Reason: "changed without write_headers"}
	}
	return nil
}

func checkSecurity(b, a *SecurityExtension) error {
	if b == nil {
		b = &SecurityExtension{}
	}
	if a == nil {
		a = &SecurityExtension{}
	}
	for _, l := range b.Labels {
		if !slices.Contains(a.Labels, l) {
			return &TierViolation{Extension: "security.labels", Tier: TierMonotonic, Reason: "label " + l + " removed"}
		}
	}
	if b.Classification != "" && a.Classification != b.Classification {
		return &TierViolation{Extension: "security.classification", Tier: TierMonotonic, Reason: "changed once set"}
	}
	if !reflect.DeepEqual(b.Subject, a.Subject) {
		return &TierViolation{Extension: "security.subject", Tier: TierImmutable, Reason: "changed"}
	}
	if !reflect.DeepEqual(b.Objects, a.Objects) && (len(b.Objects) > 0 || len(a.Objects) > 0) {
		return &TierViolation{Extension: "security.objects", Tier: TierImmutable, Reason: "changed"}
	}
	if !reflect.DeepEqual(b.Data, a.Data) && (len(b.Data) > 0 || len(a.Data) > 0) {
		return &TierViolation{Extension: "security.data", Tier: TierImmutable, Reason: "changed"}
	}
	return nil
}
