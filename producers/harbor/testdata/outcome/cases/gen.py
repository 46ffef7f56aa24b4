"""Regenerate the Harbor-format result.json cases in this folder.

Run from this folder: python3 gen.py. Tests never run it; it only records
how each file was made. Each case starts from one of the repository's own
synthetic templates (../../../harbor/testdata/synthetic/<rev>/..., written in
the key order of Harbor's pydantic TrialResult at that revision) and replaces
the fields the outcome rules read: exception_info (type, message, traceback,
occurred_at, in ExceptionInfo's key order), verifier_result, the four
TimingInfo phases and step_results. Messages follow the f-string shape of the
Harbor line each case cites (docs/outcomes.md), with made-up values; no
Harbor text is copied beyond the fixed prefix the rule matches. Output is
json.dumps(indent=4), as pydantic's model_dump_json(indent=4) writes it.
"""
import copy, json

T022 = "../../../harbor/testdata/synthetic/v0.22.0/hello-world__Pq4rSt6.json"
T5F5 = "../../../harbor/testdata/synthetic/5f5618b8/hello-world__8ZRP9RZ.json"
TMS = "../../../harbor/testdata/cases/multistep-step-agent-timeout-scored.json"


def load(p):
    with open(p) as f:
        return json.load(f)


def timing(a, b):
    return {"started_at": a, "finished_at": b}


ENV = timing("2026-08-22T12:00:01.100000Z", "2026-08-22T12:00:41.900000Z")
SETUP = timing("2026-08-22T12:00:42.000000Z", "2026-08-22T12:01:10.500000Z")
EXEC = timing("2026-08-22T12:01:10.600000Z", "2026-08-22T12:02:30.000000Z")
VER = timing("2026-08-22T12:02:31.000000Z", "2026-08-22T12:02:35.000000Z")


def exc(typ, msg, frames):
    tb = "Traceback (most recent call last):\n"
    for path, line, fn in frames:
        tb += f'  File "/opt/harbor/.venv/lib/python3.13/site-packages/{path}", line {line}, in {fn}\n    ...\n'
    tb += f"{typ}: {msg}\n"
    return {"exception_type": typ, "exception_message": msg, "exception_traceback": tb,
            "occurred_at": "2026-08-22T12:02:40.000000"}


def case(name, base, *, exception, reward, phases, suffix):
    d = copy.deepcopy(base)
    d["trial_name"] = d["trial_name"].split("__")[0] + "__" + suffix
    d["exception_info"] = exception
    d["verifier_result"] = None if reward is None else {"rewards": {"reward": reward}}
    for k, v in zip(("environment_setup", "agent_setup", "agent_execution", "verifier"), phases):
        d[k] = v
    if reward is None and "agent_result" in d and phases[2] is None:
        d["agent_result"] = None
    with open(name + ".json", "w") as f:
        f.write(json.dumps(d, indent=4) + "\n")


def compose_msg(env, verb):
    return (f"Docker compose command failed for environment {env}. Command: docker compose --project-name {env}__fx01 "
            f"--project-directory /home/user/tasks/{env}/environment -f /home/user/tasks/{env}/environment/docker-compose.yaml {verb}. "
            f"Return code: 1. Stdout: failed to solve: process \"/bin/sh -c apt-get install -y curl\" did not complete successfully: exit code: 100. Stderr: None. ")


v022 = load(T022)
v5f5 = load(T5F5)
env_only = (ENV, None, None, None)
docker_tb = [("harbor/trial/trial.py", 405, "run"), ("harbor/trial/trial.py", 444, "_prepare"),
             ("harbor/environments/docker/docker.py", 903, "start"), ("harbor/environments/docker/docker.py", 656, "_run_docker_compose_command")]

case("docker-compose-build-failed", v022, exception=exc("RuntimeError", compose_msg("hello-world", "build"), docker_tb),
     reward=None, phases=env_only, suffix="Db1Fa1l")
case("docker-compose-up-failed-5f5618b8", v5f5, exception=exc("RuntimeError", compose_msg("hello-world", "up --detach --wait"),
     [("harbor/trial/trial.py", 540, "run"), ("harbor/environments/docker/docker.py", 356, "start")]),
     reward=None, phases=env_only, suffix="Du2Fa1l")
case("docker-compose-failed-after-agent-setup", v022, exception=exc("RuntimeError", compose_msg("hello-world", "cp /tmp/x main:/logs"),
     [("harbor/trial/trial.py", 405, "run")]), reward=None, phases=(ENV, SETUP, EXEC, None), suffix="Dl4te00")
case("runtime-error-during-environment-start", v022, exception=exc("RuntimeError", "Pod failed to start: ImagePullBackOff",
     [("harbor/environments/gke.py", 700, "start")]), reward=None, phases=env_only, suffix="Rt5Env0")
case("dind-compose-up-failed", v022, exception=exc("RuntimeError", "docker compose up failed: network sandbox_default not found ",
     [("harbor/environments/daytona/environment.py", 763, "start")]), reward=None, phases=env_only, suffix="Dd6Up00")
case("apple-container-build-failed", v5f5, exception=exc("RuntimeError",
     "Container command failed for environment hello-world. Command: container build --tag hw /home/user/tasks/hello-world/environment. Return code: 1. Stdout: error. Stderr: None. ",
     [("harbor/environments/apple_container.py", 180, "start")]), reward=None, phases=env_only, suffix="Ap7Bld0")

install_msg = ("Command failed (exit 127): curl -fsSL https://example.invalid/install.sh | bash\n"
               "stdout: \nstderr: curl: (6) Could not resolve host: example.invalid")
setup_tb = [("harbor/trial/trial.py", 449, "_prepare"), ("harbor/trial/trial.py", 1455, "_setup_agent"),
            ("harbor/agents/installed/base.py", 954, "setup"), ("harbor/agents/installed/base.py", 865, "exec_as_root")]
case("agent-install-failed", v022, exception=exc("NonZeroAgentExitCodeError", install_msg, setup_tb),
     reward=None, phases=(ENV, SETUP, None, None), suffix="In8Fa1l")
case("agent-install-network-error", v022, exception=exc("NetworkConnectionError", install_msg, setup_tb),
     reward=None, phases=(ENV, SETUP, None, None), suffix="In9Net0")
case("agent-install-failed-5f5618b8", v5f5, exception=exc("NonZeroAgentExitCodeError", install_msg,
     [("harbor/trial/trial.py", 537, "run"), ("harbor/agents/installed/base.py", 384, "setup")]),
     reward=None, phases=(ENV, SETUP, None, None), suffix="In0F5f5")
case("user-agent-install-failed", v022, exception=exc("NonZeroAgentExitCodeError", install_msg,
     [("harbor/trial/trial.py", 449, "_prepare"), ("harbor/trial/trial.py", 1473, "_setup_user_agent")]),
     reward=None, phases=(ENV, None, None, None), suffix="Us1Fa1l")
case("nonzero-exit-verifier-disabled", v022, exception=exc("NonZeroAgentExitCodeError", "Command failed (exit 2): run-agent\nstdout: \nstderr: boom",
     [("harbor/trial/single_step.py", 77, "_run_agent")]), reward=None, phases=(ENV, SETUP, EXEC, None), suffix="Nz1Dis0")

vibe = copy.deepcopy(v022)
vibe["agent_info"] = {"name": "vibe", "version": "1.3.0", "model_info": {"name": "devstral-2", "provider": "mistral"}}
vibe_msg = "Command failed (exit 1): vibe --prompt 'Create hello.txt'\nstdout: \nstderr: httpx.ReadTimeout: read timeout"
vibe_tb = [("harbor/trial/single_step.py", 77, "_run_agent"), ("harbor/agents/installed/base.py", 865, "exec_as_agent")]
case("api-connection-error-success", vibe, exception=exc("ApiConnectionError", vibe_msg, vibe_tb),
     reward=1.0, phases=(ENV, SETUP, EXEC, VER), suffix="Vb2Ok00")
case("api-connection-error-no-reward", vibe, exception=exc("ApiConnectionError", vibe_msg, vibe_tb),
     reward=None, phases=(ENV, SETUP, EXEC, VER), suffix="Vb3No00")

# rewards judged on the double (issue 11 item 10): written as raw text,
# since Python would print the float back as 1.0.
for name, raw in (("reward-just-below-one", "0.9999999999999999"), ("reward-tiny-zero", "1e-400")):
    d = copy.deepcopy(v022)
    d["trial_name"] = "hello-world__Rw" + name[7:12]
    d["verifier_result"] = {"rewards": {"reward": "@@R@@"}}
    with open(name + ".json", "w") as f:
        f.write(json.dumps(d, indent=4).replace('"@@R@@"', raw) + "\n")

# multi-step: an API error on a step whose score stood
ms = load(TMS)
ms["trial_name"] = "hello-multi-step-advanced__Ms4Api0"
for s in ms["step_results"]:
    if s.get("exception_info"):
        s["exception_info"] = exc("ApiRateLimitError", "Command failed (exit 1): codex exec\nstdout: \nstderr: 429 Too Many Requests",
                                  [("harbor/trial/multi_step.py", 171, "_run_step_agent")])
with open("multistep-step-api-error-scored.json", "w") as f:
    f.write(json.dumps(ms, indent=4) + "\n")
