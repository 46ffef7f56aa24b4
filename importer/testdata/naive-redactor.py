"""The naive Python redactor: the floor BenchmarkTranscriptsCmd measures
tpctl's transcript export against (issue 36).

It applies builtin:secrets' regular expressions (redact/builtin.go, in
the same order, with the same replacements) with Python's re, line by
line, to every file named in the list file given as the only argument,
and writes the redacted lines to standard output. It is what a
researcher would write in ten minutes: no prefilter, no JSON, no
structure checks (private-key bodies are redacted on the pattern alone),
one core.
"""

import re
import sys

PATTERNS = [
    (r"-----BEGIN[ A-Z0-9]*PRIVATE KEY-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY-----|[\s\S]*)",
     "[REDACTED:private_key]"),
    (r"\b(?:M[A-Za-z0-9+/]{2}CAQ[AE]|MI[GH][A-Za-z0-9+/]AgE[AB]|MII[A-Za-z0-9+/]{3}IBA|b3BlbnNzaC1rZXktdjEA)"
     r"[A-Za-z0-9+/]*(?:\r?\n[A-Za-z0-9+/]{60,})*(?:\r?\n[A-Za-z0-9+/]+)?={0,2}",
     "[REDACTED:private_key_body]"),
    (r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*", "[REDACTED:jwt]"),
    (r"\bsk-ant-[A-Za-z0-9_-]{20,}", "[REDACTED:anthropic_key]"),
    (r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
     lambda m: "[REDACTED:openai_key]" if re.search(r"[0-9]", m.group(0)) else m.group(0)),
    (r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})", "[REDACTED:github_token]"),
    (r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", "[REDACTED:aws_access_key_id]"),
    (r"(?i)(aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9/+=]{40}\b",
     r"\1[REDACTED:aws_secret_key]"),
    (r"\bAIza[0-9A-Za-z_-]{35}", "[REDACTED:google_api_key]"),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "[REDACTED:slack_token]"),
    (r"\bhf_[A-Za-z0-9]{30,}", "[REDACTED:huggingface_token]"),
    (r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*", r"\1[REDACTED:bearer_token]"),
]


def main():
    compiled = [(re.compile(p), r) for p, r in PATTERNS]
    out = sys.stdout
    with open(sys.argv[1], encoding="utf-8") as listing:
        files = [line.rstrip("\n") for line in listing if line.strip()]
    for path in files:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                for rx, repl in compiled:
                    line = rx.sub(repl, line)
                out.write(line)


if __name__ == "__main__":
    main()
