package evalrun

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/planfile"
)

// TestEndpointReachesAgent: per agent and revision, check-plan either
// accepts the endpoint and the generated TrialConfig carries it the way
// that agent reads it (a kwarg or agent.env), or refuses the plan with
// endpoint_unused naming what the agent needs.
func TestEndpointReachesAgent(t *testing.T) {
	const url = "http://127.0.0.1:8000/v1"
	e, w := planfile.SeverityError, planfile.SeverityWarning
	cases := []struct {
		name, rev, agent, importPath, model string
		kwargs                              map[string]any
		env                                 []any
		wantKwarg, wantEnv                  string // where the endpoint lands
		want                                []codeAt
		substr                              string // in a message or hint
	}{
		{name: "terminus-2 kwarg", rev: revV022, agent: "terminus-2", wantKwarg: "api_base", want: []codeAt{}},
		{name: "terminus-2 kwarg 5f56", rev: rev5f56, agent: "terminus-2", wantKwarg: "api_base", want: []codeAt{}},
		{name: "claude-code env", rev: revV022, agent: "claude-code", model: "anthropic/m", wantEnv: "ANTHROPIC_BASE_URL", want: []codeAt{}},
		{name: "codex env 5f56", rev: rev5f56, agent: "codex", model: "openai/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "mini-swe-agent 5f56", rev: rev5f56, agent: "mini-swe-agent", wantEnv: "OPENAI_API_BASE", want: []codeAt{}},
		{name: "qwen-coder kwarg", rev: revV022, agent: "qwen-coder", wantKwarg: "base_url", want: []codeAt{}},
		{name: "kimi-cli kwarg 5f56", rev: rev5f56, agent: "kimi-cli", wantKwarg: "base_url", want: []codeAt{}},
		{name: "mimo provider fallback", rev: revV022, agent: "mimo", model: "hosted_vllm/m", wantEnv: "HOSTED_VLLM_BASE_URL", want: []codeAt{}},
		{name: "mimo listed provider", rev: revV022, agent: "mimo", model: "openai/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "mimo provider alias", rev: revV022, agent: "mimo", model: "gemini/m", wantEnv: "GOOGLE_BASE_URL", want: []codeAt{}},
		{name: "mimo provider without URL", rev: revV022, agent: "mimo", model: "together/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: `no endpoint for provider "together"`},
		{name: "mimo model without provider", rev: revV022, agent: "mimo", model: "gpt-4o",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "names no provider"},
		{name: "mimo provider not a name", rev: revV022, agent: "mimo", model: "Bad.Provider/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "is not a provider name"},
		{name: "aider openai", rev: revV022, agent: "aider", model: "openai/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "aider litellm_proxy alias", rev: revV022, agent: "aider", model: "litellm_proxy/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "aider refuses other providers", rev: revV022, agent: "aider", model: "hosted_vllm/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "(anthropic, litellm_proxy, openai)"},
		{name: "goose databricks host", rev: revV022, agent: "goose", model: "databricks/m", wantEnv: "DATABRICKS_HOST", want: []codeAt{}},
		{name: "goose refuses other providers", rev: revV022, agent: "goose", model: "hosted_vllm/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "opencode google", rev: revV022, agent: "opencode", model: "google/m", wantEnv: "GOOGLE_BASE_URL", want: []codeAt{}},
		{name: "opencode gemini prefix not written", rev: revV022, agent: "opencode", model: "gemini/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "trae-agent ollama v022", rev: revV022, agent: "trae-agent", model: "ollama/m", wantEnv: "OLLAMA_BASE_URL", want: []codeAt{}},
		{name: "trae-agent other provider v022", rev: revV022, agent: "trae-agent", model: "hosted_vllm/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "mcode listed provider", rev: revV022, agent: "mcode", model: "deepseek/m", wantEnv: "DEEPSEEK_BASE_URL", want: []codeAt{}},
		{name: "pi with model_api", rev: revV022, agent: "pi", kwargs: map[string]any{"model_api": "openai-completions"}, wantEnv: "HOSTED_VLLM_BASE_URL", want: []codeAt{}},
		{name: "pi without model_api", rev: revV022, agent: "pi",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "set agent.kwargs.model_api"},
		{name: "aider 5f56 takes none", rev: rev5f56, agent: "aider",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "never reads a model endpoint"},
		{name: "oracle takes none", rev: revV022, agent: "oracle",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "remove model.endpoint"},
		{name: "unrecorded agent", rev: rev5f56, agent: "acp",
			want: []codeAt{{e, codeTrialConfigInvalid, "/execution/agent/name"}, {e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "has not recorded"},
		{name: "cursor-cli takes none", rev: revV022, agent: "cursor-cli",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "CURSOR_API_KEY only"},
		{name: "terminus not in the factory", rev: revV022, agent: "terminus",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "Harbor refuses the name"},
		{name: "computer-1 kwarg", rev: revV022, agent: "computer-1", wantKwarg: "api_base", want: []codeAt{}},
		{name: "kimi-cli kwarg v022", rev: revV022, agent: "kimi-cli", wantKwarg: "base_url", want: []codeAt{}},
		{name: "kimi-code env", rev: revV022, agent: "kimi-code", env: []any{"KIMI_MODEL_API_KEY"}, wantEnv: "KIMI_MODEL_BASE_URL", want: []codeAt{}},
		// kimi-code's CLI reads its key inside the sandbox; Harbor passes
		// it there only through agent.env.
		{name: "kimi-code without its key", rev: revV022, agent: "kimi-code", wantEnv: "KIMI_MODEL_BASE_URL",
			want: []codeAt{{e, CodeAgentKeyMissing, "/execution/agent/env"}}, substr: `add "KIMI_MODEL_API_KEY" to agent.env`},
		{name: "mcode unlisted provider", rev: revV022, agent: "mcode", model: "hosted_vllm/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "openclaw supported provider", rev: revV022, agent: "openclaw", model: "nvidia/m", wantEnv: "NVIDIA_BASE_URL", want: []codeAt{}},
		{name: "openclaw other provider", rev: revV022, agent: "openclaw", model: "hosted_vllm/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "(anthropic, nvidia, openai)"},
		{name: "nemo-agent default llm_type", rev: revV022, agent: "nemo-agent", wantEnv: "NVIDIA_BASE_URL", want: []codeAt{}},
		{name: "nemo-agent llm_type openai", rev: revV022, agent: "nemo-agent", kwargs: map[string]any{"llm_type": "openai"}, wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "nemo-agent llm_type azure", rev: revV022, agent: "nemo-agent", kwargs: map[string]any{"llm_type": "azure_openai"}, wantEnv: "AZURE_OPENAI_ENDPOINT", want: []codeAt{}},
		{name: "nemo-agent bedrock takes none", rev: revV022, agent: "nemo-agent", kwargs: map[string]any{"llm_type": "aws_bedrock"},
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "set agent.kwargs.llm_type to one of"},
		{name: "nemo-agent llm_type not a string", rev: revV022, agent: "nemo-agent", kwargs: map[string]any{"llm_type": 3},
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "is not a string"},
		{name: "deerflow openrouter model", rev: revV022, agent: "deerflow", model: "openrouter/m", wantKwarg: "openrouter_base_url", want: []codeAt{}},
		{name: "deerflow other model", rev: revV022, agent: "deerflow",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "name the model openrouter/NAME"},
		{name: "deerflow kwarg set twice", rev: revV022, agent: "deerflow", model: "openrouter/m", kwargs: map[string]any{"openrouter_base_url": "http://x:1/v1"},
			want: []codeAt{{e, planfile.CodeSchema, "/execution/agent/kwargs/openrouter_base_url"}}},
		{name: "swe-agent hosted_vllm", rev: revV022, agent: "swe-agent", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "swe-agent openai", rev: revV022, agent: "swe-agent", model: "openai/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "swe-agent anthropic drops it", rev: revV022, agent: "swe-agent", model: "anthropic/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "(hosted_vllm, litellm_proxy, openai)"},
		{name: "swe-agent 5f56 any model", rev: rev5f56, agent: "swe-agent", model: "anthropic/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "grok-build takes none", rev: revV022, agent: "grok-build",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: "grok_config"},
		{name: "trae-agent 5f56 provider table", rev: rev5f56, agent: "trae-agent", model: "openrouter/m", wantEnv: "OPENROUTER_BASE_URL", want: []codeAt{}},
		{name: "trae-agent 5f56 other provider", rev: rev5f56, agent: "trae-agent", model: "hosted_vllm/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "openhands env beats its kwarg", rev: revV022, agent: "openhands", wantEnv: "LLM_BASE_URL", want: []codeAt{}},
		{name: "hermes openai model", rev: revV022, agent: "hermes", model: "openai/m", wantEnv: "OPENAI_BASE_URL", want: []codeAt{}},
		{name: "hermes other model", rev: revV022, agent: "hermes",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}, substr: `no endpoint for provider "hosted_vllm"`},
		{name: "trae-agent 5f56 ollama", rev: rev5f56, agent: "trae-agent", model: "ollama/m",
			want: []codeAt{{e, codeEndpointUnused, "/execution/model/endpoint"}}},
		{name: "custom agent", rev: revV022, importPath: "my.agents:Agent", wantKwarg: "api_base",
			want: []codeAt{{w, codeEndpointUnverified, "/execution/model/endpoint"}}},
		{name: "kwarg set twice", rev: revV022, agent: "qwen-coder", kwargs: map[string]any{"base_url": "http://x:1/v1"},
			want: []codeAt{{e, planfile.CodeSchema, "/execution/agent/kwargs/base_url"}}},
		{name: "env named twice", rev: revV022, agent: "claude-code", model: "anthropic/m", env: []any{"ANTHROPIC_BASE_URL"},
			want: []codeAt{{e, planfile.CodeSchema, "/execution/agent/env"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tasks := []task{{name: "a"}}
			p := basePlan(t, tasks...)
			p["source"].(map[string]any)["revision"] = tc.rev
			ex := execOf(p)
			ex["harbor"].(map[string]any)["revision"] = tc.rev
			model := "hosted_vllm/m"
			if tc.model != "" {
				model = tc.model
			}
			p["checkpoint"].(map[string]any)["served_as"] = model
			ex["model"] = map[string]any{"name": model, "endpoint": url}
			agent := map[string]any{}
			if tc.agent != "" {
				agent["name"] = tc.agent
			} else {
				agent["import_path"] = tc.importPath
			}
			if tc.kwargs != nil {
				agent["kwargs"] = tc.kwargs
			}
			if tc.env != nil {
				agent["env"] = tc.env
			}
			ex["agent"] = agent
			path := writePlan(t, t.TempDir(), p, tasks...)
			ev, rep, err := CheckPlan(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, codesOf(rep)); diff != "" {
				t.Fatalf("findings mismatch (-want +got):\n%s\n%+v", diff, rep.Findings)
			}
			if tc.substr != "" {
				var all []string
				for _, f := range rep.Findings {
					all = append(all, f.Message+" | "+f.Hint)
				}
				if !strings.Contains(strings.Join(all, "\n"), tc.substr) {
					t.Errorf("no finding says %q: %v", tc.substr, all)
				}
			}
			if ev == nil {
				return
			}
			data, err := ev.Exec.TrialConfig("a__0", "/t", "/o").Marshal()
			// A key the agent reads in the sandbox is a ${NAME} template in
			// agent.env (Harbor resolves it), never a value.
			if tc.agent == "kimi-code" && len(tc.env) > 0 && !strings.Contains(string(data), `"KIMI_MODEL_API_KEY": "${KIMI_MODEL_API_KEY}"`) {
				t.Errorf("TrialConfig lacks the key template:\n%s", data)
			}
			if err != nil {
				t.Fatal(err)
			}
			if fs := validateTrialConfig(tc.rev, data, ""); len(fs) > 0 {
				t.Fatalf("generated TrialConfig is invalid: %+v", fs)
			}
			var cfg struct {
				Agent struct {
					Kwargs map[string]any    `json:"kwargs"`
					Env    map[string]string `json:"env"`
				} `json:"agent"`
			}
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			gotKwarg, gotEnv := "", ""
			for k, v := range cfg.Agent.Kwargs {
				if v == url {
					gotKwarg = k
				}
			}
			for k, v := range cfg.Agent.Env {
				if v == url {
					gotEnv = k
				}
			}
			if gotKwarg != tc.wantKwarg || gotEnv != tc.wantEnv {
				t.Errorf("endpoint in kwarg %q env %q, want kwarg %q env %q:\n%s", gotKwarg, gotEnv, tc.wantKwarg, tc.wantEnv, data)
			}
			// The endpoint identifies the checkpoint, not the protocol: it
			// stays out of the effective settings either way.
			eff, _ := json.Marshal(ev.Exec.Effective())
			if strings.Contains(string(eff), url) {
				t.Errorf("effective settings carry the endpoint: %s", eff)
			}
		})
	}
}

// Every entry of the table names a Harbor source line, at a validated
// revision, and a known way.
func TestEndpointRulesTable(t *testing.T) {
	for _, r := range formats.Harbor {
		rules := EndpointRules(r.Commit)
		if len(rules) == 0 {
			t.Errorf("no endpoint rules for validated revision %s", r.Name)
		}
		for agent, rule := range rules {
			if rule.Source == "" || !strings.Contains(rule.Source, ".py:") {
				t.Errorf("%s %s: source %q is not a Harbor file:line", r.Name, agent, rule.Source)
			}
			switch rule.Via {
			case viaKwarg, viaEnv:
				if rule.Name == "" {
					t.Errorf("%s %s: %s without a name", r.Name, agent, rule.Via)
				}
			case viaProviderEnv:
				if len(rule.Providers) == 0 {
					t.Errorf("%s %s: provider_env without providers", r.Name, agent)
				}
			case viaNone:
			default:
				t.Errorf("%s %s: unknown way %q", r.Name, agent, rule.Via)
			}
		}
	}
}

// endpointTableMarkdown renders the table as docs/eval.md shows it.
func endpointTableMarkdown() string {
	var sb strings.Builder
	for _, r := range formats.Harbor {
		rules := EndpointRules(r.Commit)
		names := make([]string, 0, len(rules))
		for n := range rules {
			names = append(names, n)
		}
		slices.Sort(names)
		fmt.Fprintf(&sb, "Harbor %s (`%s`):\n\n| agent | the endpoint goes to | Harbor source (`src/harbor/agents/`) |\n|---|---|---|\n", r.Name, r.Commit[:8])
		for _, n := range names {
			rule := rules[n]
			var how string
			switch rule.Via {
			case viaKwarg:
				how = "kwarg `" + rule.Name + "`"
			case viaEnv:
				how = "agent env `" + rule.Name + "`"
				if rule.HostEnv {
					how += " (also Harbor's environment)"
				}
			case viaProviderEnv:
				how = "agent env: the provider's base-URL variable"
				if rule.ChooseBy != "" {
					var pairs []string
					for _, p := range endpointProviders(rule) {
						pairs = append(pairs, fmt.Sprintf("`%s` for `%s`", rule.Providers[p], p))
					}
					how = fmt.Sprintf("agent env by kwarg `%s` (default `%s`): %s", rule.ChooseBy, rule.Default, strings.Join(pairs, ", "))
				} else if !rule.AnyProvider {
					var pairs []string
					for _, p := range slices.Sorted(maps.Keys(rule.Providers)) {
						if rule.Providers[p] != "" {
							pairs = append(pairs, fmt.Sprintf("`%s` for `%s/…`", rule.Providers[p], p))
						}
					}
					how = "agent env " + strings.Join(pairs, ", ") + " models only"
				}
				if rule.HostEnv {
					how += " (also Harbor's environment)"
				}
			case viaNone:
				how = "not taken (refused)"
			}
			if rule.Provider != "" {
				how += " for `" + rule.Provider + "/…` models only"
			}
			if rule.RequiresKwarg != "" {
				how += ", only with kwarg `" + rule.RequiresKwarg + "` set"
			}
			fmt.Fprintf(&sb, "| `%s` | %s | %s |\n", n, how, rule.Source)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// docs/eval.md prints the same table as the code.
func TestEndpointTableInDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "eval.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := endpointTableMarkdown()
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/eval.md does not hold the endpoint table of evalrun/endpoint.go; put this in it:\n%s", want)
	}
}

// FuzzEndpointTarget: any agent name, model name and kwarg resolve without a
// panic, the same way twice, and an accepted endpoint lands in exactly one
// place (a kwarg or an agent env variable with a name a shell can export).
func FuzzEndpointTarget(f *testing.F) {
	for _, s := range [][3]string{
		{revV022, "mimo", "hosted_vllm/m"}, {revV022, "mimo", "together/m"}, {revV022, "mimo", "gpt-4o"},
		{revV022, "mimo", "/m"}, {revV022, "mimo", "a-b/m"}, {revV022, "aider", "hosted_vllm/m"}, {rev5f56, "trae-agent", "openai/m"},
		{revV022, "claude-code", "anthropic/m"}, {rev5f56, "oracle", "x"}, {"", "", "m"}, {revV022, "no-such", "m"},
		{revV022, "nemo-agent", "m"}, {revV022, "deerflow", "openrouter/m"}, {revV022, "deerflow", "m"},
		{revV022, "openclaw", "nvidia/m"}, {revV022, "terminus", "m"},
	} {
		f.Add(s[0], s[1], s[2], "")
	}
	varName := regexp.MustCompile(`^[A-Z0-9_]+$`)
	f.Add(revV022, "nemo-agent", "m", "openai")
	f.Add(revV022, "nemo-agent", "m", "aws_bedrock")
	f.Add(revV022, "pi", "hosted_vllm/m", "openai-completions")
	// kwarg, when set, is every kwarg an agent may choose by or require.
	f.Fuzz(func(t *testing.T, rev, agent, model, kwarg string) {
		e := &Execution{Harbor: harborSpec{Revision: rev}, Agent: agentSpec{Name: agent}, Model: modelSpec{Name: model, Endpoint: "http://h:1/v1"}}
		if kwarg != "" {
			e.Agent.Kwargs = map[string]any{"llm_type": kwarg, "model_api": kwarg}
		}
		t1, u1, err1 := e.endpointTarget()
		t2, u2, err2 := e.endpointTarget()
		if t1 != t2 || u1 != u2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("not deterministic: %+v %v %v / %+v %v %v", t1, u1, err1, t2, u2, err2)
		}
		if err1 != nil {
			return
		}
		if (t1.Kwarg == "") == (t1.Env == "") {
			t.Fatalf("endpoint goes to kwarg %q and env %q", t1.Kwarg, t1.Env)
		}
		if t1.Env != "" && !varName.MatchString(t1.Env) {
			t.Fatalf("variable name %q", t1.Env)
		}
	})
}

// TestEndpointTableCoversHarborAgents: the endpoint table has exactly
// Harbor's registered agent names per validated revision (committed under
// testdata/harbor-agents, derived from Harbor's AgentName enum as its
// README says), and that list is the agent-name enum of the TrialConfig
// schema tpctl validates against, so an agent Harbor adds or drops fails
// here rather than being refused or guessed at run time.
func TestEndpointTableCoversHarborAgents(t *testing.T) {
	for _, r := range formats.Harbor {
		t.Run(r.Name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "harbor-agents", r.Commit+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			registered := strings.Fields(string(b))
			if !slices.IsSorted(registered) || len(slices.Compact(slices.Clone(registered))) != len(registered) {
				t.Errorf("testdata list is not sorted and unique: %v", registered)
			}
			table := slices.Sorted(maps.Keys(EndpointRules(r.Commit)))
			if diff := cmp.Diff(registered, table); diff != "" {
				t.Errorf("endpoint table agents differ from Harbor's registered agents (-Harbor +table):\n%s", diff)
			}
			file, ok := trialConfigSchemaFile(r.Commit)
			if !ok {
				t.Fatalf("no TrialConfig schema for %s", r.Name)
			}
			raw, err := os.ReadFile(filepath.Join("..", "schemas", file))
			if err != nil {
				t.Fatal(err)
			}
			var schema struct {
				Properties struct {
					Agent struct {
						Properties struct {
							Name struct {
								Enum  []string `json:"enum"`
								AnyOf []struct {
									Enum []string `json:"enum"`
								} `json:"anyOf"`
							} `json:"name"`
						} `json:"properties"`
					} `json:"agent"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(raw, &schema); err != nil {
				t.Fatal(err)
			}
			// v0.22.0 also takes module:Class and acp:… names (an anyOf
			// beside the enum).
			name := schema.Properties.Agent.Properties.Name
			enum := name.Enum
			for _, alt := range name.AnyOf {
				enum = append(enum, alt.Enum...)
			}
			slices.Sort(enum)
			if diff := cmp.Diff(registered, enum); diff != "" {
				t.Errorf("%s agent names differ from testdata (-testdata +schema):\n%s", file, diff)
			}
		})
	}
}
