package transcript

import (
	"unicode/utf8"
)

// jsonCharLen is the encoded length of one rune (r, of width size bytes in
// the source) inside a JSON string, exactly as encoding/json writes it with
// HTML escaping off.
func jsonCharLen(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20:
		return 6 // \u00XX
	case r == utf8.RuneError && size == 1:
		return 6 // invalid byte, written as \ufffd
	case r == '\u2028' || r == '\u2029':
		return 6
	}
	return size
}

// jsonStringLen is the encoded length of s as a JSON string, quotes included.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n += jsonCharLen(rune(c), 1)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += jsonCharLen(r, size)
		i += size
	}
	return n
}

// cutToEncoded returns the longest prefix of s, ending on a character
// boundary, whose JSON string body (quotes excluded) is at most room bytes.
func cutToEncoded(s string, room int) string {
	used := 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if s[i] >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		w := jsonCharLen(r, size)
		if used+w > room {
			return s[:i]
		}
		used += w
		i += size
	}
	return s
}

// messageLen is the encoded length of m.
func messageLen(m Message) int {
	content := m.Content
	m.Content = ""
	b, _ := marshal(m) // a Message always encodes
	return len(b) - 1 - 2 + jsonStringLen(content)
}

// collector keeps messages in order until a limit is reached and counts
// the rest. It is the streaming form of Truncate.
type collector struct {
	lim    Limits
	budget int // bytes available for messages, commas included
	used   int
	kept   []Message
	total  int
	full   bool
	cut    bool
}

// newCollector sizes the budget from the encoded empty trajectory; reserve
// bytes are kept free for fields not filled yet.
func newCollector(lim Limits, envelope *Trajectory, reserve int) *collector {
	e := *envelope
	e.Messages = []Message{}
	b, _ := marshal(&e)
	return &collector{lim: lim, budget: lim.MaxBytes - len(b) - reserve}
}

// minCut is the smallest content worth keeping from a message cut to fit:
// a few bytes of a message are noise, not a sample.
const minCut = 16

// add offers the next message (already redacted) and reports whether it
// was kept, whole or cut.
func (c *collector) add(m Message) bool {
	if c.full {
		return false
	}
	if len(c.kept) >= c.lim.MaxMessages {
		c.full = true
		return false
	}
	sep := 0
	if len(c.kept) > 0 {
		sep = 1
	}
	n := messageLen(m)
	if c.used+sep+n <= c.budget {
		c.kept = append(c.kept, m)
		c.used += sep + n
		return true
	}
	// The first message that does not fit is cut to the room left, on a
	// character boundary, and closes the trajectory.
	c.full = true
	empty := m
	empty.Content = ""
	room := c.budget - c.used - sep - messageLen(empty)
	if room < minCut {
		return false
	}
	m.Content = cutToEncoded(m.Content, room)
	c.kept = append(c.kept, m)
	c.used += sep + messageLen(m)
	c.cut = true
	return true
}

func (c *collector) truncated() bool { return c.cut || len(c.kept) < c.total }

// Truncate keeps the longest prefix of msgs that fits lim in a trajectory
// whose other fields are those of envelope (IDs included), cutting the
// first message that does not fit when enough room is left for it. The
// encoded trajectory (Encode) with the kept messages is at most
// lim.MaxBytes. truncated reports whether anything was dropped or cut.
func Truncate(msgs []Message, envelope *Trajectory, lim Limits) (kept []Message, truncated bool) {
	lim = lim.withDefaults()
	e := *envelope
	e.TotalMessages = len(msgs)
	c := newCollector(lim, &e, 0)
	for _, m := range msgs {
		c.total++
		c.add(m)
	}
	return c.kept, c.truncated()
}
