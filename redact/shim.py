# tpctl redactor shim: runs a Python function str -> str as a tpctl
# exec redactor. Protocol: one JSON object per line on stdin,
# {"id": N, "text": "..."}; one answer per line on stdout,
# {"id": N, "text": "..."} or {"id": N, "error": "..."}.
import importlib
import io
import json
import sys


def main():
    mod_name, func_name = sys.argv[1], sys.argv[2]
    proto_out = sys.stdout
    # Whatever the user's code prints must not corrupt the protocol.
    sys.stdout = sys.stderr
    proto_in = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
    try:
        mod = importlib.import_module(mod_name)
    except Exception as e:  # noqa: BLE001 - report any import failure
        sys.stderr.write("tpctl-redact-shim: cannot import module %r: %s: %s\n" % (mod_name, type(e).__name__, e))
        sys.exit(3)
    fn = getattr(mod, func_name, None)
    if not callable(fn):
        sys.stderr.write("tpctl-redact-shim: module %r has no function %r\n" % (mod_name, func_name))
        sys.exit(3)
    for line in proto_in:
        req = json.loads(line)
        rid = req["id"]
        try:
            out = fn(req["text"])
        except Exception as e:  # noqa: BLE001 - any failure refuses the text
            answer = {"id": rid, "error": "%s.%s raised %s: %s" % (mod_name, func_name, type(e).__name__, e)}
        else:
            if isinstance(out, str):
                answer = {"id": rid, "text": out}
            else:
                answer = {"id": rid, "error": "%s.%s returned %s, not str" % (mod_name, func_name, type(out).__name__)}
        proto_out.write(json.dumps(answer) + "\n")
        proto_out.flush()


main()
