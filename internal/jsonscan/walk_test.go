package jsonscan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// TestStart checks the start offset of every token of the seeds against
// where the token's text is: a bracket's own byte, a scalar's Raw text.
func TestStart(t *testing.T) {
	for _, s := range append(seeds, ` [ "a" , { "k" : -1.5e3 } , true ]`) {
		dec := jsonscan.NewBytes([]byte(s), jsonscan.Options{})
		for {
			k, err := dec.Next()
			if err != nil {
				break
			}
			start, end := dec.Start(), dec.InputOffset()
			var want string
			switch k {
			case jsonscan.BeginObject:
				want = "{"
			case jsonscan.EndObject:
				want = "}"
			case jsonscan.BeginArray:
				want = "["
			case jsonscan.EndArray:
				want = "]"
			default:
				want = string(dec.Raw())
			}
			if got := s[start:end]; got != want {
				t.Errorf("%q: token %v at %d..%d is %q, want %q", s, k, start, end, got, want)
			}
		}
	}

	// The same, spelt out once.
	dec := jsonscan.NewBytes([]byte(` { "a" : [ 12 , "x\n" , true , {} ] } `), jsonscan.Options{})
	var starts []int64
	for {
		if _, err := dec.Next(); err != nil {
			break
		}
		starts = append(starts, dec.Start())
	}
	if got, want := fmt.Sprint(starts), "[1 3 9 11 16 24 31 32 34 36]"; got != want {
		t.Errorf("starts %s, want %s", got, want)
	}
}

func TestRest(t *testing.T) {
	for _, tc := range []struct {
		in  string
		off int64
		ok  bool
	}{{`{}`, 2, false}, {"{} \n\t", 2, false}, {`{} x`, 3, true}, {"1\n]", 2, true}, {`"a"}`, 3, true}} {
		dec := jsonscan.NewBytes([]byte(tc.in), jsonscan.Options{})
		k, err := dec.Next()
		if err == nil {
			err = dec.Skip(k)
		}
		if err != nil {
			t.Fatal(err)
		}
		if off, ok := dec.Rest(); off != tc.off || ok != tc.ok {
			t.Errorf("%q: Rest() = %d, %v; want %d, %v", tc.in, off, ok, tc.off, tc.ok)
		}
	}
}

// oneValue reads the tokens of the value that comes next inside an array
// (or the error reading them, with its offset).
func oneValue(dec *jsonscan.Decoder) []string {
	var out []string
	for {
		k, err := dec.Next()
		if err != nil {
			return append(out, fmt.Sprintf("%v at %d", err, dec.InputOffset()))
		}
		tok := fmt.Sprint(k)
		if k == jsonscan.String || k == jsonscan.Number {
			tok += " " + string(dec.Raw())
		}
		out = append(out, fmt.Sprintf("%s @%d", tok, dec.Start()))
		if dec.Depth() <= 1 {
			return out
		}
	}
}

// TestRewind reads part of a value, rewinds and reads the whole: the
// tokens, offsets and errors are those of reading it straight away.
func TestRewind(t *testing.T) {
	for _, s := range append(seeds, `{"a":[1,{"b":"c\u00e9"}]}`, `{"a":1`, `{"a" 1}`) {
		data := []byte("[" + s + "]")
		straight := jsonscan.NewBytes(data, jsonscan.Options{})
		straight.Next()
		want := strings.Join(oneValue(straight), "\n")
		for partial := 0; partial < 8; partial++ {
			dec := jsonscan.NewBytes(data, jsonscan.Options{})
			dec.Next()
			m := dec.Mark()
			for i := 0; i < partial; i++ {
				if _, err := dec.Next(); err != nil || dec.Depth() <= 1 {
					break
				}
			}
			if dec.Depth() < 1 {
				continue // the array open at Mark closed: no rewinding
			}
			dec.Rewind(m)
			if got := strings.Join(oneValue(dec), "\n"); got != want {
				t.Errorf("%q after %d tokens and Rewind:\n%s\nwant\n%s", s, partial, got, want)
			}
		}
	}
}

func TestRewindRefused(t *testing.T) {
	for name, dec := range map[string]*jsonscan.Decoder{
		"reader":         jsonscan.NewDecoder(strings.NewReader(`[1]`), jsonscan.Options{}),
		"duplicate keys": jsonscan.NewBytes([]byte(`[1]`), jsonscan.Options{DuplicateKeys: true}),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Rewind did not refuse", name)
				}
			}()
			dec.Rewind(dec.Mark())
		}()
	}
}
