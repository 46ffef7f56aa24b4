package atif

import (
	"fmt"
	"strings"
	"testing"
)

// TestErrorsExact pins whole error messages, offsets and pointers included.
// The expected texts were recorded from the encoding/json-based decoder
// this one replaced, so they hold the walker on jsonscan to the same
// wording; each input is also decoded with every step skimmed, which must
// fail the same way.
func TestErrorsExact(t *testing.T) {
	tests := []struct {
		in   string
		max  int64
		want string
	}{
		{"", 0, "/ (near byte 0): file is empty"},
		{"", 100, "/ (near byte 0): file is empty"},
		{"   ", 0, "/ (near byte 3): unexpected end of file: unexpected EOF"},
		{"   ", 100, "/ (near byte 3): unexpected end of file: unexpected EOF"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":", 0, "/agent/version (near byte 60): unexpected end of file: unexpected EOF"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":", 100, "/agent/version (near byte 60): unexpected end of file: unexpected EOF"},
		{"{\"schema_vers", 0, "/ (near byte 1): invalid JSON: unexpected EOF"},
		{"{\"schema_vers", 100, "/ (near byte 1): invalid JSON: unexpected EOF"},
		{"{\"schema_version\":\"ATIF-v1.6\",", 0, "/ (near byte 30): unexpected end of file: unexpected EOF"},
		{"{\"schema_version\":\"ATIF-v1.6\",", 100, "/ (near byte 30): unexpected end of file: unexpected EOF"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} xyz", 0, "/ (near byte 121): unexpected data after the trajectory object: invalid character 'x' looking for beginning of value"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} xyz", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} {", 0, "unsupported trajectory format JSON Lines: the file holds several JSON values, one per line; tpctl reads only ATIF (agent/trajectory.json with schema_version ATIF-v1.0 … ATIF-v1.7)"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} {", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} \"x\"", 0, "/ (near byte 124): unexpected data after the trajectory object"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} \"x\"", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} }", 0, "/ (near byte 121): unexpected data after the trajectory object: invalid character '}' looking for beginning of value"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} }", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} \"ab", 0, "/ (near byte 121): unexpected data after the trajectory object: unexpected EOF"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"}]} \"ab", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"h\\i\"}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character 'i' in string escape code"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"h\\i\"}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"h\\u12x4\"}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character 'x' in \\u hexadecimal character escape"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"h\\u12x4\"}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"h\x01\"}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character '\\x01' in string literal"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"h\x01\"}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":tru}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character '}' in literal true (expecting 'e')"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":tru}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":nulL}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character 'L' in literal null (expecting 'l')"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":nulL}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":-}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character '}' in numeric literal"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":-}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":1.}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character '}' after decimal point in numeric literal"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":1.}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":1e+}]}", 0, "/steps/0/message (near byte 113): invalid JSON: invalid character '}' in exponent of numeric literal"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":1e+}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":01}]}", 0, "/steps/0/message (near byte 114): content must be an array, got a number"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":01}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[1 2]}]}", 0, "/steps/0/message/0 (near byte 115): content part must be an object, got a number"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":[1 2]}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1.5,\"source\":\"user\",\"message\":\"hi\"}]}", 0, "/steps/0/step_id (near byte 88): must be an integer, got 1.5"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1.5,\"source\":\"user\",\"message\":\"hi\"}]}", 100, "/steps/0/step_id (near byte 88): must be an integer, got 1.5"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":12.0,\"source\":\"user\",\"message\":\"hi\"}]}", 0, "<nil>"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":12.0,\"source\":\"user\",\"message\":\"hi\"}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,,\"source\":\"user\",\"message\":\"hi\"}]}", 0, "/steps/0 (near byte 87): invalid JSON: invalid character ',' looking for beginning of object key string"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,,\"source\":\"user\",\"message\":\"hi\"}]}", 100, "/steps/0 (near byte 87): invalid JSON: invalid character ',' looking for beginning of object key string"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\" 1,\"source\":\"user\",\"message\":\"hi\"}]}", 0, "/steps/0/step_id (near byte 85): invalid JSON: invalid character '1' after object key"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\" 1,\"source\":\"user\",\"message\":\"hi\"}]}", 100, "/steps/0/step_id (near byte 85): invalid JSON: invalid character '1' after object key"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{1:1,\"source\":\"user\",\"message\":\"hi\"}]}", 0, "/steps/0 (near byte 75): invalid JSON: invalid character '1'"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{1:1,\"source\":\"user\",\"message\":\"hi\"}]}", 100, "/steps/0 (near byte 75): invalid JSON: invalid character '1'"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",}]}", 0, "/steps/0 (near byte 118): invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"},]}", 0, "/steps/1 (near byte 119): invalid JSON: invalid character ']' looking for beginning of value"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\"},]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\": \"ATIF-v1.6\", \"steps\": [}", 0, "/steps (near byte 42): invalid JSON: invalid character '}' looking for beginning of value"},
		{"{\"schema_version\": \"ATIF-v1.6\", \"steps\": [}", 100, "/steps (near byte 42): invalid JSON: invalid character '}' looking for beginning of value"},
		{"[1]", 0, "unsupported trajectory format JSON array (an agent's native event list, e.g. OpenHands): this is the agent's own format, which Harbor converts into agent/trajectory.json; tpctl reads only ATIF (agent/trajectory.json with schema_version ATIF-v1.0 … ATIF-v1.7)"},
		{"[1]", 100, "unsupported trajectory format JSON array (an agent's native event list, e.g. OpenHands): this is the agent's own format, which Harbor converts into agent/trajectory.json; tpctl reads only ATIF (agent/trajectory.json with schema_version ATIF-v1.0 … ATIF-v1.7)"},
		{"\"ATIF\"", 0, "/ (near byte 6): the trajectory must be an object, got a string"},
		{"\"ATIF\"", 100, "/ (near byte 6): the trajectory must be an object, got a string"},
		{"{\"messages\":[{\"role\":\"user\"}]}", 0, "unsupported trajectory format unknown JSON: no schema_version and no steps; tpctl reads only ATIF (agent/trajectory.json with schema_version ATIF-v1.0 … ATIF-v1.7)"},
		{"{\"messages\":[{\"role\":\"user\"}]}", 100, "unsupported trajectory format unknown JSON: no schema_version and no steps; tpctl reads only ATIF (agent/trajectory.json with schema_version ATIF-v1.0 … ATIF-v1.7)"},
		{"{\"steps\":[{\"source\":\"user\"}]}", 0, "/schema_version (near byte 29): missing; tpctl reads ATIF-v1.0 … ATIF-v1.7 and needs the version stated"},
		{"{\"steps\":[{\"source\":\"user\"}]}", 100, "/schema_version (near byte 29): missing; tpctl reads ATIF-v1.0 … ATIF-v1.7 and needs the version stated"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",\"tool_calls\":[{\"tool_call_id\":\"a\",\"function_name\":\"f\",\"arguments\":{\"a\":[1,{\"b\":nul}]}}]}]}", 0, "/steps/0/tool_calls/0/arguments (near byte 197): invalid JSON: invalid character '}' in literal null (expecting 'l')"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",\"tool_calls\":[{\"tool_call_id\":\"a\",\"function_name\":\"f\",\"arguments\":{\"a\":[1,{\"b\":nul}]}}]}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",\"metrics\":{\"extra\":{\"duration_ms\":[1,}}}}]}", 0, "/steps/0/metrics/extra/duration_ms (near byte 155): invalid JSON: invalid character '}' looking for beginning of value"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",\"metrics\":{\"extra\":{\"duration_ms\":[1,}}}}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",\"observation\":{\"results\":[{\"content\":[{\"type\":\"image\",\"source\":{\"media_type\":5}}]}]}}]}", 0, "/steps/0/observation/results/0/content/0/source/media_type (near byte 196): must be a string, got a number"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"user\",\"message\":\"hi\",\"observation\":{\"results\":[{\"content\":[{\"type\":\"image\",\"source\":{\"media_type\":5}}]}]}}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"robot\",\"message\":\"hi\"}]}", 0, "/steps/0/source (near byte 103): must be \"system\", \"user\" or \"agent\", got \"robot\""},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"source\":\"robot\",\"message\":\"hi\"}]}", 100, "file is over the 100-byte limit"},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"message\":\"hi\"}]}", 0, "/steps/0 (near byte 102): step has no source; it must be \"system\", \"user\" or \"agent\""},
		{"{\"schema_version\":\"ATIF-v1.6\",\"agent\":{\"name\":\"a\",\"version\":\"1\"},\"steps\":[{\"step_id\":1,\"message\":\"hi\"}]}", 100, "file is over the 100-byte limit"},
	}
	for _, tt := range tests {
		for _, skim := range []bool{false, true} {
			opts := Options{MaxSize: tt.max}
			if skim {
				opts.Skim = func() bool { return true }
			}
			_, err := Decode(strings.NewReader(tt.in), opts, nil)
			if got := fmt.Sprint(err); got != tt.want {
				t.Errorf("%q (max %d, skim %v):\n got %s\nwant %s", tt.in, tt.max, skim, got, tt.want)
			}
		}
	}
}
