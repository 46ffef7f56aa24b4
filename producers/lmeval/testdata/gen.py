#!/usr/bin/env python3
"""Writes the lm-eval fixtures under this folder (python3 gen.py, from here).

lm-evaluation-harness itself cannot run on this machine (it needs
`datasets`, which neither Debian nor the offline package mirror has), so
these files are written the way lm-eval writes them, not recorded from a
run. Each rule below names the lm-eval code it follows, at
EleutherAI/lm-evaluation-harness commit
4e7e0d47f33bc71070c1d38394bafbb52b117163:

- the per-document record: lm_eval/evaluator.py, evaluate() (the `example`
  dict: doc_id, doc, target, arguments, resps, filtered_resps, filter,
  metrics, doc_hash, prompt_hash, target_hash, then the metric values);
- hashes: lm_eval/utils.py hash_string (SHA-256 hex of the UTF-8 string);
  doc_hash over json.dumps(doc, indent=2, ensure_ascii=False), prompt_hash
  over the first request's context, target_hash over str(target);
- the samples file: lm_eval/loggers/evaluation_tracker.py
  save_results_samples (arguments as gen_args_i/arg_j, resps and
  filtered_resps through sanitize_list, str(target), one
  json.dumps(ensure_ascii=False) line per record, appended one at a time);
- the results file: save_results_aggregated (task_hashes over every
  record's doc_hash+prompt_hash+target_hash in order, the
  GeneralConfigTracker fields appended, json.dumps(indent=2,
  ensure_ascii=False)); its body follows evaluator_utils.py
  _to_eval_results and simple_evaluate (config, git_hash, date) and
  loggers/utils.py add_env_info (lm_eval_version, ...).

The documents, prompts and answers are invented. Running this again
rewrites the same bytes.
"""

import hashlib
import json
import math
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
LM_EVAL_VERSION = "0.4.13.dev0"
GIT_HASH = "4e7e0d4"


def hash_string(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def sanitize_list(sub):
    if isinstance(sub, list):
        return [sanitize_list(x) for x in sub]
    if isinstance(sub, tuple):
        return tuple(sanitize_list(x) for x in sub)
    return str(sub)


def sanitize_model_name(name):
    import re

    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def mean_stderr(xs):
    n = len(xs)
    if n < 2:
        return "N/A"
    mu = sum(xs) / n
    var = sum((x - mu) ** 2 for x in xs) / (n - 1)
    return math.sqrt(var) / math.sqrt(n)


# --- tasks -------------------------------------------------------------

COLOURS = ["red", "green", "blue", "yellow"]


def arc_docs(n):
    docs = []
    for i in range(n):
        docs.append(
            {
                "id": f"Q{i:04d}",
                "question": f"Which colour is listed at position {i % 4} of the card #{i}?",
                "choices": {"text": COLOURS, "label": ["A", "B", "C", "D"]},
                "answerKey": "ABCD"[i % 4],
            }
        )
    return docs


def arc_config(num_fewshot=0, metadata=None):
    return {
        "task": "arc_easy",
        "tag": ["ai2_arc"],
        "dataset_path": "local/arc_cards",
        "dataset_name": "cards",
        "training_split": "train",
        "validation_split": "validation",
        "test_split": "test",
        "doc_to_text": "Question: {{question}}\nAnswer:",
        "doc_to_target": "{{choices.label.index(answerKey)}}",
        "unsafe_code": False,
        "doc_to_choice": "{{choices.text}}",
        "description": "",
        "target_delimiter": " ",
        "fewshot_delimiter": "\n\n",
        "fewshot_config": {"sampler": "default", "split": None, "process_docs": None,
                           "fewshot_indices": None, "samples": None,
                           "doc_to_text": "Question: {{question}}\nAnswer:",
                           "doc_to_choice": "{{choices.text}}",
                           "doc_to_target": "{{choices.label.index(answerKey)}}",
                           "gen_prefix": None, "fewshot_delimiter": "\n\n",
                           "target_delimiter": " "},
        "num_fewshot": num_fewshot,
        "metric_list": [
            {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
        ],
        "output_type": "multiple_choice",
        "repeats": 1,
        "should_decontaminate": True,
        "doc_to_decontamination_query": "Question: {{question}}\nAnswer:",
        "metadata": metadata or {"version": 1.0},
    }


def arc_record(doc_id, doc, correct, fewshot_prefix=""):
    """One multiple-choice document: four loglikelihood requests."""
    context = fewshot_prefix + f"Question: {doc['question']}\nAnswer:"
    gold = "ABCD".index(doc["answerKey"])
    pick = gold if correct else (gold + 1) % 4
    lls = []
    for c in range(4):
        lls.append((-1.5 - 0.25 * c if c != pick else -0.5, c == pick))
    requests = [(context, " " + COLOURS[c]) for c in range(4)]
    acc = 1.0 if correct else 0.0
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": gold,
        "arguments": requests,
        "resps": [[ll] for ll in lls],
        "filtered_resps": lls,
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": hash_string(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": hash_string(requests[0][0]),
        "target_hash": hash_string(str(gold)),
        "acc": acc,
        "acc_norm": acc,
    }


def gsm_docs(n):
    return [
        {"question": f"Ann has {i + 2} apples and buys {i + 3} more. How many now?",
         "answer": f"{i + 2} + {i + 3} = {2 * i + 5}\n#### {2 * i + 5}"}
        for i in range(n)
    ]


def gsm_config():
    return {
        "task": "gsm8k",
        "tag": ["math_word_problems"],
        "dataset_path": "local/gsm_apples",
        "dataset_name": "main",
        "training_split": "train",
        "test_split": "test",
        "fewshot_split": "train",
        "doc_to_text": "Question: {{question}}\nAnswer:",
        "doc_to_target": "{{answer}}",
        "unsafe_code": False,
        "description": "",
        "target_delimiter": " ",
        "fewshot_delimiter": "\n\n",
        "num_fewshot": 0,
        "metric_list": [
            {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True,
             "ignore_case": True, "ignore_punctuation": False,
             "regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]},
        ],
        "output_type": "generate_until",
        "generation_kwargs": {"until": ["Question:", "</s>", "<|im_end|>"],
                              "do_sample": False, "temperature": 0.0},
        "repeats": 1,
        "filter_list": [
            {"name": "strict-match", "filter": [
                {"function": "regex", "regex_pattern": "#### (\\-?[0-9\\.\\,]+)"},
                {"function": "take_first"}]},
            {"name": "flexible-extract", "filter": [
                {"function": "regex", "group_select": -1,
                 "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"},
                {"function": "take_first"}]},
        ],
        "should_decontaminate": False,
        "metadata": {"version": 3.0, "pretrained": "EleutherAI/pythia-160m"},
    }


def gsm_records(doc_id, doc, answer_text, strict, flexible):
    context = f"Question: {doc['question']}\nAnswer:"
    gen_kwargs = gsm_config()["generation_kwargs"]
    requests = [(context, gen_kwargs)]
    out = []
    for name, value in (("strict-match", strict), ("flexible-extract", flexible)):
        em = 1.0 if value == doc["answer"].split("#### ")[-1] else 0.0
        out.append({
            "doc_id": doc_id,
            "doc": doc,
            "target": doc["answer"],
            "arguments": requests,
            "resps": [[answer_text]],
            "filtered_resps": [value],
            "filter": name,
            "metrics": ["exact_match"],
            "doc_hash": hash_string(json.dumps(doc, indent=2, ensure_ascii=False)),
            "prompt_hash": hash_string(requests[0][0]),
            "target_hash": hash_string(str(doc["answer"])),
            "exact_match": em,
        })
    return out


# --- writing, as the tracker does ------------------------------------------


def sample_line(sample):
    sample = dict(sample)
    arguments = {}
    for i, arg in enumerate(sample["arguments"]):
        arguments[f"gen_args_{i}"] = {}
        for j, tmp in enumerate(arg):
            arguments[f"gen_args_{i}"][f"arg_{j}"] = tmp
    sample["resps"] = sanitize_list(sample["resps"])
    sample["filtered_resps"] = sanitize_list(sample["filtered_resps"])
    sample["arguments"] = arguments
    sample["target"] = str(sample["target"])
    return json.dumps(sample, ensure_ascii=False) + "\n"


def task_results(name, samples_by_filter, n, metrics):
    out = {"name": name, "alias": name, "sample_len": n}
    for filt, recs in samples_by_filter.items():
        for m in metrics:
            xs = [r[m] for r in recs]
            out[f"{m},{filt}"] = sum(xs) / len(xs)
            out[f"{m}_stderr,{filt}"] = mean_stderr(xs)
    return out


def write_run(folder, model, date_id, tasks, model_info=None, keep_lines=None,
              log_samples=True, chat_template=None, system_instruction=None):
    """tasks: {name: (config, records, original, effective, version, hib)}."""
    sanitized = sanitize_model_name(model)
    out_dir = os.path.join(HERE, folder, sanitized)
    os.makedirs(out_dir, exist_ok=True)
    results = {"results": {}, "group_subtasks": {}, "configs": {}, "versions": {},
               "n-shot": {}, "higher_is_better": {}, "n-samples": {}}
    samples = {}
    for name in sorted(tasks):
        cfg, recs, original, effective, version, hib = tasks[name]
        by_filter = {}
        for r in recs:
            by_filter.setdefault(r["filter"], []).append(r)
        metrics = [m["metric"] for m in cfg["metric_list"]]
        results["results"][name] = task_results(name, by_filter, effective, metrics)
        results["group_subtasks"][name] = []
        results["configs"][name] = cfg
        results["versions"][name] = version
        results["n-shot"][name] = cfg["num_fewshot"]
        results["higher_is_better"][name] = hib
        results["n-samples"][name] = {"original": original, "effective": effective}
        samples[name] = recs
    config = {"model": "hf", "model_args": f"pretrained={model},dtype=float32"}
    config.update(model_info or {})
    config.update({"batch_size": "1", "batch_sizes": [], "device": "cpu", "use_cache": None,
                   "limit": None, "bootstrap_iters": 100000, "gen_kwargs": None,
                   "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234,
                   "fewshot_seed": 1234})
    results["config"] = config
    results["git_hash"] = GIT_HASH
    results["date"] = 1764583200.0
    results["pretty_env_info"] = "PyTorch version: 2.9.1 (fixture)"
    results["transformers_version"] = "4.57.1"
    results["lm_eval_version"] = LM_EVAL_VERSION
    results["upper_git_hash"] = None
    task_hashes = {}
    if log_samples:
        for name, recs in samples.items():
            task_hashes[name] = hash_string(
                "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in recs))
    results["task_hashes"] = task_hashes
    results.update({
        "model_source": "hf",
        "model_name": model,
        "model_name_sanitized": sanitized,
        "system_instruction": system_instruction,
        "system_instruction_sha": hash_string(system_instruction) if system_instruction else None,
        "fewshot_as_multiturn": False,
        "chat_template": chat_template,
        "chat_template_sha": hash_string(chat_template) if chat_template else None,
        "start_time": 1234.5,
        "end_time": 1260.25,
        "total_evaluation_time_seconds": "25.75",
    })
    with open(os.path.join(out_dir, f"results_{date_id}.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(results, indent=2, ensure_ascii=False))
    if not log_samples:
        return
    # The tracker appends one line at a time, task after task in configs
    # order; keep_lines stops that loop as a crash would.
    budget = keep_lines
    for name in results["configs"]:
        if budget is not None and budget <= 0:
            break
        path = os.path.join(out_dir, f"samples_{name}_{date_id}.jsonl")
        for rec in samples[name]:
            if budget is not None:
                if budget <= 0:
                    break
                budget -= 1
            with open(path, "a", encoding="utf-8") as f:
                f.write(sample_line(rec))


ARC_HIB = {"acc": True, "acc_norm": True}
HF_INFO = {"model_num_parameters": 162322944, "model_dtype": "torch.float32",
           "model_revision": "main", "model_sha": "50f5173d932e8e61f858120bcb800b97af589f46"}


def main():
    for d in ("two-tasks", "paired", "config-differs", "aggregate-only", "limited"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)

    # 1. Two tasks in one run; the run stopped while writing arc_easy's
    #    samples after 6 of its 10 lines, so gsm8k's file was never written.
    arc = arc_docs(10)
    arc_recs = [arc_record(i, d, correct=(i % 3 != 0)) for i, d in enumerate(arc)]
    gsm = gsm_docs(8)
    gsm_recs = []
    for i, d in enumerate(gsm):
        want = d["answer"].split("#### ")[-1]
        ok = i % 2 == 0
        text = f" {want} apples.\n#### {want}" if ok else " I think 7 apples."
        gsm_recs += gsm_records(i, d, text, want if ok else "[invalid]", want if ok else "7")
    write_run("two-tasks", "EleutherAI/pythia-160m", "2026-11-30T10-00-00.123456", {
        "arc_easy": (arc_config(), arc_recs, 2376, 10, 1.0, ARC_HIB),
        "gsm8k": (gsm_config(), gsm_recs, 1319, 8, 3.0, {"exact_match": True}),
    }, model_info=HF_INFO, keep_lines=6)

    # 2. Paired: two models, one task, the same 20 documents and config.
    arc20 = arc_docs(20)
    a = [arc_record(i, d, correct=(i % 4 != 0)) for i, d in enumerate(arc20)]
    b = [arc_record(i, d, correct=(i % 5 != 0 and i != 7)) for i, d in enumerate(arc20)]
    write_run("paired", "EleutherAI/pythia-160m", "2026-11-30T11-00-00.000001",
              {"arc_easy": (arc_config(), a, 2376, 20, 1.0, ARC_HIB)}, model_info=HF_INFO)
    write_run("paired", "EleutherAI/pythia-410m", "2026-11-30T12-00-00.000002",
              {"arc_easy": (arc_config(), b, 2376, 20, 1.0, ARC_HIB)},
              model_info=dict(HF_INFO, model_sha="9879c9b5f8bea9051dcb0e68dff21493d67e9d4f"))

    # 3. The same documents under another config (5-shot): not comparable.
    prefix = "Question: Which colour is the sky?\nAnswer: blue\n\n" * 5
    c = [arc_record(i, d, correct=(i % 2 == 0), fewshot_prefix=prefix) for i, d in enumerate(arc20)]
    write_run("config-differs", "EleutherAI/pythia-410m", "2026-11-30T13-00-00.000003",
              {"arc_easy": (arc_config(num_fewshot=5), c, 2376, 20, 1.0, ARC_HIB)},
              model_info=HF_INFO)

    # 4. A limited run of the same task (--limit 12): other documents.
    l = [arc_record(i, d, correct=True) for i, d in enumerate(arc20[:12])]
    write_run("limited", "EleutherAI/pythia-410m", "2026-11-30T14-00-00.000004",
              {"arc_easy": (arc_config(), l, 2376, 12, 1.0, ARC_HIB)}, model_info=HF_INFO,
              chat_template="{% for m in messages %}{{ m.content }}{% endfor %}",
              system_instruction="Answer with one colour.")

    # 5. Aggregate only, as lm-eval's old tests/testdata/*-res.json are: no
    #    n-samples, no configs, no samples.
    os.makedirs(os.path.join(HERE, "aggregate-only"), exist_ok=True)
    with open(os.path.join(HERE, "aggregate-only", "results_2023-06-01T00-00-00.000000.json"),
              "w", encoding="utf-8") as f:
        f.write(json.dumps({"results": {"anagrams1": {"acc": 0.0, "acc_stderr": 0.0}},
                            "versions": {"anagrams1": 0}}))


if __name__ == "__main__":
    main()
