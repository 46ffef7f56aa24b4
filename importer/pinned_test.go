package importer_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/importer"
	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/plandraft"
	"github.com/tuneplane/tpctl/producers/harbor/wing"
)

// TestHarborPinned holds Harbor's path through tpctl byte for byte: the
// drafts plan init writes for the bundled and shared Harbor jobs, and the
// round ID and every file of the snapshots imported from them (the
// example's plans, transcripts included once). The values were recorded
// on main before the producer seam (issue 31) moved Harbor into its wing,
// and must never change with a refactor: a difference here is a change
// in what a user's round ID or saved files are.
func TestHarborPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every example job")
	}
	const example = "../testdata/example"
	got := map[string]string{}
	record := func(name string, b []byte) {
		sum := sha256.Sum256(b)
		got[name] = hex.EncodeToString(sum[:])
	}
	snap := func(name, plan, root string, tr *importer.TranscriptOptions) {
		out := filepath.Join(t.TempDir(), "snap")
		res, err := importer.Import(context.Background(), importer.Options{Producers: harborOnly(t), PlanPath: plan, Root: root, Out: out, Transcripts: tr, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: import: %v", name, err)
		}
		got[name+" round"] = res.Manifest.RoundID
		var ws []string
		for _, w := range res.Warnings {
			ws = append(ws, w.Code+": "+w.Message)
		}
		for _, w := range res.Skipped {
			ws = append(ws, "skipped "+w.Code+": "+w.Message)
		}
		record(name+" warnings", []byte(strings.Join(ws, "\n")))
		err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(out, p)
			record(name+" "+filepath.ToSlash(rel), b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"import-plan.json", "import-plan-round-2.json", "import-plan-round-3.json", "import-plan-v0.22.0.json"} {
		snap(p, filepath.Join(example, p), example, nil)
	}
	snap("import-plan-round-3.json+transcripts", filepath.Join(example, "import-plan-round-3.json"), example,
		&importer.TranscriptOptions{Limit: 8, Redactors: []string{"builtin:secrets"}})

	// Drafts, and the import of each draft with its placeholders filled.
	jobs := map[string]string{
		"example 04-08": example + "/jobs/2026-04-08__12-00-00",
		"example 04-15": example + "/jobs/2026-04-15__09-00-00",
		"example 04-22": example + "/jobs/2026-04-22__09-00-00",
		"example 08-22": example + "/jobs/2026-08-22__10-00-00",
		"v0.22.0 job":   "../testdata/harbor-v0.22.0/jobs/2026-09-01__10-00-00",
	}
	if dir, ok := fixtures.HarborDir(); ok {
		jobs["shared 04-08"] = dir + "/results/synthetic/jobs/2026-04-08__12-00-00"
		jobs["shared 08-22"] = dir + "/v0.22.0/results/synthetic/jobs/2026-08-22__10-00-00"
	} else {
		fixtures.Harbor(t) // skips, or fails in CI
	}
	fill := map[string]string{
		"/source/revision":             `"4407eb5227a2ff4f0d3f16b2eb48849382fdf276"`,
		"/split":                       `"heldout"`,
		"/checkpoint/ref":              `"hf://acme/coder-7b@3f0c9d2e5b7a41c8e6f2d9b0a1c3e5f7a9b1d3e5"`,
		"/protocol/dataset_digest":     `"` + strings.Repeat("a", 64) + `"`,
		"/protocol/verifier_digest":    `"` + strings.Repeat("b", 64) + `"`,
		"/protocol/environment_digest": `"` + strings.Repeat("c", 64) + `"`,
		"/protocol/harness_digest":     `"` + strings.Repeat("d", 64) + `"`,
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range jobs {
			if !yield(k) {
				return
			}
		}
	}) {
		root := jobs[name]
		var drafts []*plandraft.Draft
		d, err := plandraft.FromJob(root, plandraft.Options{})
		var pe *plandraft.PairsError
		switch {
		case err == nil:
			drafts = append(drafts, d)
		case errors.As(err, &pe):
			for _, p := range pe.Pairs {
				d, err := plandraft.FromJob(root, plandraft.Options{Agent: p.Agent, Model: p.Model})
				if err != nil {
					t.Fatalf("%s %s: %v", name, p, err)
				}
				drafts = append(drafts, d)
			}
		default:
			t.Fatalf("%s: draft: %v", name, err)
		}
		for i, d := range drafts {
			n := fmt.Sprintf("%s draft %d", name, i)
			b, err := planfile.DraftJSON(d.Plan)
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			for _, sk := range d.Skipped {
				said = append(said, "skipped "+sk.Dir+": "+sk.Reason)
			}
			said = append(said, d.Warnings...)
			said = append(said, d.Notes...)
			said = append(said, fmt.Sprintf("declared %v pair %s counts %+v", d.Declared, d.Pair, d.Counts))
			record(n, b)
			record(n+" said", []byte(strings.Join(said, "\n")))
			for _, ptr := range plandraft.Placeholders(d.Plan) {
				if b, err = planfile.Set(b, ptr, []byte(fill[ptr]), planfile.Options{}); err != nil {
					t.Fatalf("%s: set %s: %v", n, ptr, err)
				}
			}
			plan := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(plan, b, 0o644); err != nil {
				t.Fatal(err)
			}
			snap(n, plan, root, nil)
		}
	}

	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	}) {
		w, ok := pinned[k]
		switch {
		case !ok:
			t.Errorf("not pinned: %q: %q,", k, got[k])
		case w != got[k]:
			t.Errorf("%s changed: %s, pinned %s", k, got[k], w)
		}
	}
	for k := range pinned {
		if _, ok := got[k]; !ok {
			t.Errorf("pinned %q was not produced", k)
		}
	}
}

// pinned was recorded on main at 8f399c5, before issue 31's seam. Issue
// 33 (item 7) changed the drafts on purpose: plan init proposes the
// verifier, environment and harness digests from a job's files and
// records the agent's generation arguments in settings, so the drafts,
// their plans, rounds and snapshot.json moved; every observations.jsonl
// (the judged attempts) stayed byte for byte.
var pinned = map[string]string{
	"example 04-08 draft 0":                                       "b5c284193ad024c5790d53bfe7a3536cecf59df6da42dfa32520cee85d6a9170",
	"example 04-08 draft 0 observations.jsonl":                    "7166d162f176e45c99a38b1b8e8f9714d6bc4449e899f2431ce063b1226dcd57",
	"example 04-08 draft 0 plan.json":                             "ad7a90ce896a93d77fe9035f10a3b086e4a401cc80266b958eac25714b79ed4f",
	"example 04-08 draft 0 round":                                 "native:d16e3487d6e881c2b7c099111c6ddf54651301fefd77999d88c0da9415964a4f",
	"example 04-08 draft 0 said":                                  "b7fdbe3b3861d3f49629770ec462abf0931610adaf523d4dbb0d82c02e87d93d",
	"example 04-08 draft 0 snapshot.json":                         "89e3a43b700b4235aaac6c9153a0572d86a0bbc64572da80cd24d3196c1703df",
	"example 04-08 draft 0 warnings":                              "3ef14e57f5c7f120c7b5c5c4b1ea644f11c834a897e54427b4a520c0bc82cbcf",
	"example 04-15 draft 0":                                       "a0e21a5502b4cb79c7816b05bd9cfbdea8262585933d985bf4afdcf00db53198",
	"example 04-15 draft 0 observations.jsonl":                    "74b9f5c408e5caa410e24bbb83dac5a2221953199db8fdd03fb22a17658680e9",
	"example 04-15 draft 0 plan.json":                             "bc799c190f227cd86e05144c1f1b17ba96a0890f3f18814f143a4cff5ba3d644",
	"example 04-15 draft 0 round":                                 "native:5a6fc9ca8835a2bfb36ec34df28febf51ae11340dd1977df01bbb2bcdc907897",
	"example 04-15 draft 0 said":                                  "316519970bf4ecdb9bbd36bf442a418641f364420f3f2a278a5eb8d78e9bd706",
	"example 04-15 draft 0 snapshot.json":                         "75472d6affd67a14e502600f2085d331b75ab6c4533ac51baf57d899cee42d23",
	"example 04-15 draft 0 warnings":                              "3ef14e57f5c7f120c7b5c5c4b1ea644f11c834a897e54427b4a520c0bc82cbcf",
	"example 04-22 draft 0":                                       "7589568266ae113259ea4bcc3dd2ff371c9657975f6077b7fbd0424774aa08c0",
	"example 04-22 draft 0 observations.jsonl":                    "cc0d8bb48270e77df75a135a66e3e805f0181ad608a4a184da3c066927be7ed6",
	"example 04-22 draft 0 plan.json":                             "07a32f3cf83116e638f9c2913a3a1d99110efb5b9e4b171df0bd1da32f8ab784",
	"example 04-22 draft 0 round":                                 "native:2bd53e80a9f347b2848f9d6e2564450b45a6e8db88430bb22287e90569f4cb41",
	"example 04-22 draft 0 said":                                  "316519970bf4ecdb9bbd36bf442a418641f364420f3f2a278a5eb8d78e9bd706",
	"example 04-22 draft 0 snapshot.json":                         "51c0b4436f7d21edc708503bea7589981debc8342ab7aa69a71a44b71fdb7ad6",
	"example 04-22 draft 0 warnings":                              "3ef14e57f5c7f120c7b5c5c4b1ea644f11c834a897e54427b4a520c0bc82cbcf",
	"example 08-22 draft 0":                                       "4938ea2cfb82cdbe83fb9b11fec6180fa0fb2408506879c990e1df66e01e8c55",
	"example 08-22 draft 0 observations.jsonl":                    "1c58c02dca859301b43369dc0806368a89a41d360c1a18f943358ffa97285477",
	"example 08-22 draft 0 plan.json":                             "13c7b560f693698809447e57b1b1fdaf3ff86689f0cabd5604de486cea8f3a4b",
	"example 08-22 draft 0 round":                                 "native:29e072029b766e1dcdc6215426ec1da3b8aaa714dcc22335e395adb3f1dfd2b8",
	"example 08-22 draft 0 said":                                  "82af82d8cf5fc31373924648bc7803a1435912ada125ffd4cb1cdb39d0b1681b",
	"example 08-22 draft 0 snapshot.json":                         "7825e9e2a57cadcf057c1f70584f887983a9a4956c9121a82aa8540fdd7f18fc",
	"example 08-22 draft 0 warnings":                              "566e23bf6d2295f1eba4ba09a6a4aab9854711c7e0f971aa8a433546c43cf796",
	"import-plan-round-2.json observations.jsonl":                 "d80cb0f086df9b3022bf325d3c237210a0589fe475a8fc1901d15af16d41d64d",
	"import-plan-round-2.json plan.json":                          "569c92ff0587368f691c1c1dddf880cf5dd858379c6fbc8890aeff596471a8cb",
	"import-plan-round-2.json round":                              "native:b29a900396a2ecf3a1a3be6b7399241b3bc97a8cc5aba7ef1f2d86f9e3945282",
	"import-plan-round-2.json snapshot.json":                      "07ccf4f28157e99c8767c227c6a99c2bdc6626dfad9da9894ac6f0550ab853e5",
	"import-plan-round-2.json warnings":                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"import-plan-round-3.json observations.jsonl":                 "c8c3e53a76c4c3b2d1366e1147c647cbec1e15f631fc60eb73b09488abbd580c",
	"import-plan-round-3.json plan.json":                          "e0a7076097c69a2001c75634ccc654969c6fd7c853bc31708dde7df1216874a6",
	"import-plan-round-3.json round":                              "native:80734a8016535ec1e5938b50fcd7a7267ad308cc8caddc04b1b8aab8f4dbc8ad",
	"import-plan-round-3.json snapshot.json":                      "354d7505e92bd48675e0dfbec205333643562c178ac30decb8186c3ec0f739a6",
	"import-plan-round-3.json warnings":                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"import-plan-round-3.json+transcripts observations.jsonl":     "c8c3e53a76c4c3b2d1366e1147c647cbec1e15f631fc60eb73b09488abbd580c",
	"import-plan-round-3.json+transcripts plan.json":              "e0a7076097c69a2001c75634ccc654969c6fd7c853bc31708dde7df1216874a6",
	"import-plan-round-3.json+transcripts round":                  "native:80734a8016535ec1e5938b50fcd7a7267ad308cc8caddc04b1b8aab8f4dbc8ad",
	"import-plan-round-3.json+transcripts snapshot.json":          "a52ced149c46fcb7ac777773e292d12772adeb91e03362c797a3431c83a90238",
	"import-plan-round-3.json+transcripts trajectories/0001.json": "b674fab6ba16171e24670d6dc25b0ea8098f9a3e4cecd5f7d49e630c97742e60",
	"import-plan-round-3.json+transcripts trajectories/0002.json": "88e3fc579a315119470fc892e75c32c301e715c27d414866e001dd1d04b3f820",
	"import-plan-round-3.json+transcripts trajectories/0003.json": "725a707eaf52f02dc940b3e6f6d22bae8ff56c2854ea097e7cfaa8619c7c2043",
	"import-plan-round-3.json+transcripts trajectories/0004.json": "f016494899c668b5226bda428a8776ad727022aa74d42dbb3db0bc4f91794f24",
	"import-plan-round-3.json+transcripts trajectories/0005.json": "2b580b5950ec8f0460e14598cb25435bc4a4c53990bf04d42c0888d9bbbaf257",
	"import-plan-round-3.json+transcripts trajectories/0006.json": "26b8cf98165801ca07e7ef16155ee71c21275f14e4cc66562a078abc378d14e3",
	"import-plan-round-3.json+transcripts trajectories/0007.json": "858a1b5e627857ccd30c0baf28fa9dc7da43558571a017f1e0e044082952c10f",
	"import-plan-round-3.json+transcripts trajectories/0008.json": "9c08e037ce9937b66cd49ede281020f994563ee98de1157f476e0146e24bdcd6",
	"import-plan-round-3.json+transcripts warnings":               "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"import-plan-v0.22.0.json observations.jsonl":                 "1c58c02dca859301b43369dc0806368a89a41d360c1a18f943358ffa97285477",
	"import-plan-v0.22.0.json plan.json":                          "a31bd46cb458b3a3d84d5cf8806160da6507294cec78668e652a2a30013b12f8",
	"import-plan-v0.22.0.json round":                              "native:59b01fa3c3392c9adae1d2f7a3d6cd8be6d2124c2fa3423727f17bc9ffc9e2b8",
	"import-plan-v0.22.0.json snapshot.json":                      "0458c6f47a75d98c4aca8ee09ffc5c52aef213b1d9f171ed5b7c4a535e4db88c",
	"import-plan-v0.22.0.json warnings":                           "3f56893199d399a69652aaa7b63ee7e146f46bff780bef9a80b63fbaa96202ef",
	"import-plan.json observations.jsonl":                         "7166d162f176e45c99a38b1b8e8f9714d6bc4449e899f2431ce063b1226dcd57",
	"import-plan.json plan.json":                                  "bd84a789192df826d45115a25a356ed04bef9e34f32f94d8105105ff753cbd2d",
	"import-plan.json round":                                      "native:bd2a67c1e6b95671e5243ceb065a96518a01be9525ac5dfc4002bd883ecca9ad",
	"import-plan.json snapshot.json":                              "ea672a6736b6817945b28cab8d89542c89b342b4273a360cf47a81e6777be89b",
	"import-plan.json warnings":                                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"shared 04-08 draft 0":                                        "36e6c61483c025a0a0684b4a751e6f20a194d5de6fcf5445d6a6e47e942d4603",
	"shared 04-08 draft 0 observations.jsonl":                     "7166d162f176e45c99a38b1b8e8f9714d6bc4449e899f2431ce063b1226dcd57",
	"shared 04-08 draft 0 plan.json":                              "aa51a471c06503eac8cb7999507985cb5203e2c5898f9f165c3b570d706242c2",
	"shared 04-08 draft 0 round":                                  "native:783a2bff493815bfa2275eed5df739c1cb2d9a8bb2ceb7b790c9de31dbe24fbd",
	"shared 04-08 draft 0 said":                                   "357d5f3f353863bd2fe2d51ef7ea55cafb373c5811aed37895d6de4ac152957a",
	"shared 04-08 draft 0 snapshot.json":                          "690737dd4f084ab8b57e2f704705c3dbf2a653e15c22c040235fa8a03b2843ff",
	"shared 04-08 draft 0 warnings":                               "3ef14e57f5c7f120c7b5c5c4b1ea644f11c834a897e54427b4a520c0bc82cbcf",
	"shared 08-22 draft 0":                                        "4938ea2cfb82cdbe83fb9b11fec6180fa0fb2408506879c990e1df66e01e8c55",
	"shared 08-22 draft 0 observations.jsonl":                     "1c58c02dca859301b43369dc0806368a89a41d360c1a18f943358ffa97285477",
	"shared 08-22 draft 0 plan.json":                              "13c7b560f693698809447e57b1b1fdaf3ff86689f0cabd5604de486cea8f3a4b",
	"shared 08-22 draft 0 round":                                  "native:29e072029b766e1dcdc6215426ec1da3b8aaa714dcc22335e395adb3f1dfd2b8",
	"shared 08-22 draft 0 said":                                   "82af82d8cf5fc31373924648bc7803a1435912ada125ffd4cb1cdb39d0b1681b",
	"shared 08-22 draft 0 snapshot.json":                          "7825e9e2a57cadcf057c1f70584f887983a9a4956c9121a82aa8540fdd7f18fc",
	"shared 08-22 draft 0 warnings":                               "566e23bf6d2295f1eba4ba09a6a4aab9854711c7e0f971aa8a433546c43cf796",
	"v0.22.0 job draft 0":                                         "903a1f96e0c3c218797b811d51ef99ade0b87a9323b6d582321411d620fbb692",
	"v0.22.0 job draft 0 observations.jsonl":                      "d60977869a8a34d0a98520715cceda88b50f240a548a5300fa075adf0ad9de95",
	"v0.22.0 job draft 0 plan.json":                               "716d3a171db4cfe4661664d43c2ea86cbb5313c5734f3b2253cd972c349cca9a",
	"v0.22.0 job draft 0 round":                                   "native:9c70fa1f27e9d435dafb9066b5fa9a7c1fee8610b12cac801ee8653e1e78025d",
	"v0.22.0 job draft 0 said":                                    "8b134834550a8003cc761e8d8ed46c6cc8083045330364b9f9f77b3d227aeaff",
	"v0.22.0 job draft 0 snapshot.json":                           "6926c4227ba52d816753abf1d0ed93dfffc2673497fd7f2914b63530b0f54da7",
	"v0.22.0 job draft 0 warnings":                                "dde9b28a1b3629cc11ed051b2750826c32cc9fcff38fb4311b9ad1c9b1d0d580",
	"v0.22.0 job draft 1":                                         "4287235770cdd253c6d0a4adc405ed4da58168f2012a534fa3abc34cb710e1db",
	"v0.22.0 job draft 1 observations.jsonl":                      "ecffad83cef1b0a04b13c19a84f7f8154f7a2b7269c1e0d32159d5e69ec66b23",
	"v0.22.0 job draft 1 plan.json":                               "a9757cd78348c506da80e9599629f95d1f7eff9b15087e517c5dc2d0a72763b6",
	"v0.22.0 job draft 1 round":                                   "native:0c52874dd08027aef3038c036ec27f7c318729d38974daecf1d41f0c32a58eab",
	"v0.22.0 job draft 1 said":                                    "78c1afbdc2d44447cf887f78068a83954f6124dff50e84bdd233a3e938cb6185",
	"v0.22.0 job draft 1 snapshot.json":                           "d034efbf103b9bbb820f26c2017829a9f96a158f322d2a85088ec9161f92a47c",
	"v0.22.0 job draft 1 warnings":                                "d90a7a4f3fdce7c1ea6abfe3f09cad36f8b5eb4313215bafe1c646e0798fc17d",
}

func harborOnly(t *testing.T) *producers.Registry {
	r, err := producers.NewRegistry(wing.New())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
