// Package digits writes counts for people: 2,376, not 2376. It is the one
// digit grouper of every view (the terminal's internal/ui.Count, the
// model's wording of a dataset scope, the report page, the producers'
// draft notes), and imports nothing that draws, so the model may use it.
package digits

import "strconv"

// Group is n with a comma between each group of three digits: "999",
// "1,000", "-20,000".
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	b := make([]byte, 0, len(sign)+len(s)+len(s)/3)
	b = append(b, sign...)
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
