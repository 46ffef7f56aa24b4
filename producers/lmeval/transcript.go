package lmeval

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Message is one message of a document's neutral transcript.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// ErrNoBodies is a sample read without its bodies.
var ErrNoBodies = errors.New("the sample was read without its bodies")

// Transcript turns a sample line (read with bodies) into two messages:
// the prompt lm-eval sent (arguments) and the model's response (resps),
// with the filtered response beside it when the filter changed it.
//
// A generation task sends one request: arg_0 is the prompt (arg_1, the
// generation kwargs, is settings, not text). A multiple-choice task sends
// one loglikelihood request per choice, each the same context with one
// continuation, and its responses are [log-likelihood, is-greedy] pairs:
// the prompt lists the choices and the response gives each one's pair.
func Transcript(s *Sample) ([]Message, error) {
	if s.Arguments == nil && s.Resps == nil {
		return nil, ErrNoBodies
	}
	args, err := requests(s.Arguments)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	resps, _ := s.Resps.([]any)
	filtered, _ := s.FilteredResps.([]any)
	var user, asst strings.Builder
	switch {
	case len(args) == 1:
		user.WriteString(args[0].context)
		writeResponse(&asst, "", resps, 0)
		if f := flat(at(filtered, 0)); f != "" && f != flat(first(at(resps, 0))) {
			fmt.Fprintf(&asst, "\n\n[filtered (%s)] %s", s.Filter, f)
		}
	default:
		ctx := ""
		same := true
		for i, a := range args {
			if i == 0 {
				ctx = a.context
			} else if a.context != ctx {
				same = false
			}
		}
		if same {
			user.WriteString(ctx)
			user.WriteString("\n\n[choices]")
			for i, a := range args {
				fmt.Fprintf(&user, "\n%d. %s", i, a.continuation)
			}
		} else {
			for i, a := range args {
				if i > 0 {
					user.WriteString("\n\n")
				}
				fmt.Fprintf(&user, "[request %d]\n%s%s", i, a.context, a.continuation)
			}
		}
		for i, a := range args {
			if i > 0 {
				asst.WriteString("\n")
			}
			writeResponse(&asst, fmt.Sprintf("%d. %s: ", i, strings.TrimSpace(a.continuation)), resps, i)
		}
	}
	return []Message{{Role: "user", Content: user.String()}, {Role: "assistant", Content: asst.String()}}, nil
}

type request struct{ context, continuation string }

// requests reads {"gen_args_0": {"arg_0": …, "arg_1": …}, …} in index
// order (evaluation_tracker.py save_results_samples writes them so).
func requests(v any) ([]request, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not lm-eval's gen_args object")
	}
	type idx struct {
		i int
		r request
	}
	var list []idx
	for k, a := range m {
		n, err := strconv.Atoi(strings.TrimPrefix(k, "gen_args_"))
		if !strings.HasPrefix(k, "gen_args_") || err != nil {
			return nil, fmt.Errorf("unexpected key %q", k)
		}
		am, _ := a.(map[string]any)
		ctx, _ := am["arg_0"].(string)
		cont, _ := am["arg_1"].(string) // a dict (generation kwargs) is not text
		list = append(list, idx{n, request{ctx, cont}})
	}
	sort.Slice(list, func(a, b int) bool { return list[a].i < list[b].i })
	out := make([]request, len(list))
	for i, x := range list {
		out[i] = x.r
	}
	return out, nil
}

// writeResponse writes request i's responses (one per repeat).
func writeResponse(b *strings.Builder, label string, resps []any, i int) {
	b.WriteString(label)
	reps, _ := at(resps, i).([]any)
	for k, r := range reps {
		if len(reps) > 1 {
			fmt.Fprintf(b, "\n[repeat %d] ", k)
		}
		b.WriteString(flat(r))
	}
}

func at(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return nil
}

func first(v any) any {
	if a, ok := v.([]any); ok && len(a) > 0 {
		return a[0]
	}
	return nil
}

// flat renders a response: a string as is, a [log-likelihood, is-greedy]
// pair as "-0.5 (greedy: True)", anything else as canonical JSON.
func flat(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		if len(x) == 2 {
			ll, ok1 := x[0].(string)
			g, ok2 := x[1].(string)
			if ok1 && ok2 {
				return ll + " (greedy: " + g + ")"
			}
		}
	}
	return string(Canonical(v))
}
