package testknob

import (
	"strings"
	"unicode"
)

// NameWords splits a Go or JSON name into lowercase words at case changes and
// underscores ("BaselineSHA": baseline, sha; "reset_from": reset, from), for tests
// that judge a field by its name.
func NameWords(name string) []string {
	var words []string
	var cur []rune
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_':
			if len(cur) > 0 {
				words, cur = append(words, strings.ToLower(string(cur))), nil
			}
			continue
		case unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])):
			words, cur = append(words, strings.ToLower(string(cur))), nil
		}
		cur = append(cur, r)
	}
	if len(cur) > 0 {
		words = append(words, strings.ToLower(string(cur)))
	}
	return words
}
