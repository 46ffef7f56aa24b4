package planfile

import (
	"fmt"
	"strings"
	"unicode"
)

// secretWords are name words that mark a field as holding a credential.
// "token" is a secret but "tokens" is not: max_tokens is a generation
// setting, not a credential.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "passphrase": true,
	"secret": true, "secrets": true,
	"token":      true,
	"credential": true, "credentials": true,
	"apikey": true, "bearer": true, "authorization": true,
	"privatekey": true, "accesskey": true,
}

// secretPairs are two adjacent words that together name a credential.
var secretPairs = map[[2]string]bool{
	{"api", "key"}: true, {"access", "key"}: true, {"private", "key"}: true,
	{"secret", "key"}: true, {"client", "secret"}: true, {"auth", "key"}: true,
	{"session", "key"}: true, {"signing", "key"}: true,
}

// nameWords splits a member name into lowercase words at non-letters,
// non-digits and camelCase boundaries: "openaiApiKey" → openai, api, key.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// IsSecretName reports whether a member name looks like it holds a
// credential (api_key, apiKey, token, password, client_secret, …).
func IsSecretName(name string) bool {
	ws := nameWords(name)
	for i, w := range ws {
		if secretWords[w] {
			return true
		}
		if i+1 < len(ws) && secretPairs[[2]string{w, ws[i+1]}] {
			return true
		}
	}
	return false
}

// secretFields reports every member, at any depth, whose name looks like a
// credential. Plans are committed and uploaded: secrets come from the
// environment (SPEC §6, §8), never from a plan.
func secretFields(root any) []pending {
	return secretFieldsUnder(nil, root, map[string]bool{})
}

// secretFieldsUnder is secretFields for a value found at prefix; memo
// caches IsSecretName across calls.
func secretFieldsUnder(prefix []pathElem, root any, memo map[string]bool) []pending {
	var out []pending
	path := append([]pathElem(nil), prefix...)
	var walk func(v any)
	walk = func(v any) {
		if len(path) > MaxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			// Map order is random, but findings are sorted afterwards.
			for k, e := range x {
				sec, ok := memo[k]
				if !ok {
					sec = IsSecretName(k)
					memo[k] = sec
				}
				path = append(path, pathElem{key: k})
				if sec {
					out = append(out, errAt(CodeSecretField, pointerOf(path),
						fmt.Sprintf("field %q looks like a credential; plans must not hold secrets", k),
						"remove it and provide the value through the environment (plans are committed and uploaded)"))
				}
				walk(e)
				path = path[:len(path)-1]
			}
		case []any:
			for i, e := range x {
				path = append(path, pathElem{index: i, isIdx: true})
				walk(e)
				path = path[:len(path)-1]
			}
		}
	}
	walk(root)
	return out
}
