package cmf

// matchGlob reports whether s matches pattern, where "*" matches any run of
// characters other than "/", "**" matches any run including "/", and "**/"
// also matches nothing at all (so "a/**/b" matches "a/b"). Every other
// character, including ".", "?", "[" and "\", matches only itself: there is
// no regular expression underneath, so nothing needs escaping.
//
// It runs in O(len(pattern)·len(s)) time (dynamic programming over suffixes),
// so neither a hostile pattern nor a hostile URI can make it backtrack.
func matchGlob(pattern, s string) bool {
	toks := globTokens(pattern)
	n := len(s)
	next := make([]bool, n+1) // next[j]: toks[i+1:] matches s[j:]
	cur := make([]bool, n+1)
	next[n] = true
	for i := len(toks) - 1; i >= 0; i-- {
		t := toks[i]
		switch t {
		case tokStar:
			cur[n] = next[n]
			for j := n - 1; j >= 0; j-- {
				cur[j] = next[j] || (s[j] != '/' && cur[j+1])
			}
		case tokDoubleStar:
			cur[n] = next[n]
			for j := n - 1; j >= 0; j-- {
				cur[j] = next[j] || cur[j+1]
			}
		case tokDoubleStarSlash:
			// Empty, or any run that ends with "/".
			endsSlash := false // some k > j with s[k-1] == '/' and next[k]
			cur[n] = next[n]
			for j := n - 1; j >= 0; j-- {
				endsSlash = endsSlash || (s[j] == '/' && next[j+1])
				cur[j] = next[j] || endsSlash
			}
		default:
			cur[n] = false
			for j := n - 1; j >= 0; j-- {
				cur[j] = s[j] == byte(t) && next[j+1]
			}
		}
		cur, next = next, cur
	}
	return next[0]
}

const (
	tokStar            = -1
	tokDoubleStar      = -2
	tokDoubleStarSlash = -3
)

// globTokens splits a pattern into literal bytes and wildcard tokens.
func globTokens(p string) []int {
	toks := make([]int, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '*' {
			toks = append(toks, int(p[i]))
			continue
		}
		if i+1 < len(p) && p[i+1] == '*' {
			for i+1 < len(p) && p[i+1] == '*' { // "***" is "**"
				i++
			}
			if i+1 < len(p) && p[i+1] == '/' {
				i++
				toks = append(toks, tokDoubleStarSlash)
			} else {
				toks = append(toks, tokDoubleStar)
			}
			continue
		}
		toks = append(toks, tokStar)
	}
	return toks
}
