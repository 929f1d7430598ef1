"""The Helm chart, linted and rendered by a real helm and checked against Kubernetes' schemas."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_support import (
    CHART,
    CHART_SCRIPTS,
    REPO,
    Helm,
    containers_of,
    env_of,
    mounts_of,
    of_kind,
    pod_specs,
)
from kubernetes_validate import utils as kube_schemas

from vibey_gh.config import parse_config

pytestmark = pytest.mark.helm

ONE_NODE = ["model-node-a"]
THREE_NODES = ["model-node-a", "model-node-b", "ip-10-0-1-23.eu-west-1.compute.internal"]
LONG_NODES = [
    "gpu-worker-pool-a-0001.cluster.example.internal",
    "gpu-worker-pool-a-0002.cluster.example.internal",
]

VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "one-node": {"calibration": {"nodes": ONE_NODE}},
    "three-nodes": {
        "config": {"concurrentRuns": "measured"},
        "calibration": {"nodes": THREE_NODES},
    },
    "cronjob": {
        "calibration": {"nodes": THREE_NODES, "cronJob": {"enabled": True, "timeZone": "Etc/UTC"}}
    },
    "gpu": {
        "gpu": {"nodeSelector": {"nvidia.com/gpu.present": "true"}, "count": 1},
        "calibration": {"nodes": ONE_NODE},
    },
    "production-settings": {
        "runner": {
            "extraEnv": [
                {"name": "OLLAMA_FLASH_ATTENTION", "value": "1"},
                {"name": "OLLAMA_KV_CACHE_TYPE", "value": "q8_0"},
                {"name": "GODEBUG", "value": "x=1"},
            ]
        },
        "calibration": {"nodes": ONE_NODE},
    },
    "custom-window": {
        "window": 131072,
        "config": {"concurrentRuns": 2},
        "calibration": {"nodes": ONE_NODE, "slots": "1,1,2"},
    },
    "existing-claims": {
        "modelStore": {"existingClaim": "ollama-models"},
        "state": {"existingClaim": "vibey-evidence"},
        "calibration": {
            "nodes": ONE_NODE,
            "onlyIfRequested": False,
            "corpus": "corpora/storm-65536.json",
        },
    },
    "long-node-names": {"calibration": {"nodes": LONG_NODES, "cronJob": {"enabled": True}}},
    "operators": {
        "follow": {
            "intervalSeconds": 120,
            "textfileHostPath": "/var/lib/node-exporter/textfile",
            "annotatePods": True,
        },
        "gpu": {"count": 1},
    },
    "no-follow": {"follow": {"enabled": False}},
}
# the oldest Kubernetes the chart declares (Chart.yaml kubeVersion) and the helm client's own
KUBERNETES_VERSIONS = ("1.26.0", "1.35.0")
NAMESPACE = "models"
STARTUP_TOML = "vibey-gh-startup.toml"


def nodes_of(name: str) -> list[str]:
    return list(VALUE_SETS[name].get("calibration", {}).get("nodes", []))


def chart_values() -> dict[str, Any]:
    return dict(yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8")))


def runner_pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (daemonset,) = of_kind(docs, "DaemonSet")
    return dict(daemonset["spec"]["template"]["spec"])


def container(spec: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [c for c in containers_of(spec) if c["name"] == name]
    return found


def config_text(docs: list[dict[str, Any]], key: str = "vibey-gh.toml") -> str:
    (config,) = [d for d in of_kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("-config")]
    return str(config["data"][key])


def job_pods(docs: list[dict[str, Any]], kind: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(object, pod spec) for every Job or CronJob."""
    found = []
    for doc in of_kind(docs, kind):
        spec = doc["spec"]["jobTemplate"]["spec"] if kind == "CronJob" else doc["spec"]
        found.append((doc, spec["template"]["spec"]))
    return found


@pytest.mark.parametrize("name", VALUE_SETS)
def test_chart_passes_strict_lint(helm: Helm, name: str) -> None:
    result = helm.lint(name, VALUE_SETS[name])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout, result.stdout


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("name", VALUE_SETS)
def test_every_manifest_is_valid_kubernetes_in_strict_mode(
    helm: Helm, name: str, version: str
) -> None:
    docs = helm.template(name, VALUE_SETS[name])
    assert {"ConfigMap", "DaemonSet", "Service"} <= {doc["kind"] for doc in docs}
    problems = []
    for doc in docs:
        try:
            kube_schemas.validate(doc, version, strict=True)
        except kube_schemas.ValidationError as exc:
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc}")
    assert not problems, "\n".join(problems)


def test_strict_validation_rejects_a_misspelt_field(helm: Helm) -> None:
    (daemonset,) = of_kind(helm.template("one-node", VALUE_SETS["one-node"]), "DaemonSet")
    broken = copy.deepcopy(daemonset)
    broken["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    with pytest.raises(kube_schemas.ValidationError):
        kube_schemas.validate(broken, KUBERNETES_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("name", ["one-node", "three-nodes", "gpu", "long-node-names"])
def test_one_calibration_job_per_node_pinned_to_that_node(helm: Helm, name: str) -> None:
    docs = helm.template(name, VALUE_SETS[name])
    jobs = job_pods(docs, "Job")
    assert len(jobs) == len(nodes_of(name))
    pinned = []
    for job, spec in jobs:
        node = spec["nodeSelector"]["kubernetes.io/hostname"]
        pinned.append(node)
        assert job["metadata"]["annotations"]["vibey-gh/node"] == node
        assert spec["restartPolicy"] == "Never"
        (calibrate,) = spec["containers"]
        assert calibrate["command"][-1].endswith("/calibrate-node.sh")
        args = calibrate["args"]
        assert args[0] == "--if-requested"
        assert args[args.index("--runner") + 1] == "ollama"
        assert args[args.index("--out") + 1].endswith(f"/calibrations/{node}")
        # waits out Ollama's keep-alive after a worker's last request instead of refusing
        assert args[args.index("--wait-idle") + 1] == "900"
        # one corpus for every node, on the shared state volume, drawn for this window
        env = env_of(calibrate)
        assert env["VIBEY_GH_CORPUS"] == f"{env['VIBEY_GH_SLOTS_DIR']}/corpus-65536.json"
        assert env["VIBEY_GH_WINDOW"] == "65536"
    assert sorted(pinned) == sorted(nodes_of(name))


def test_no_calibration_objects_without_nodes(helm: Helm) -> None:
    docs = helm.template("defaults", VALUE_SETS["defaults"])
    assert of_kind(docs, "Job") == [] and of_kind(docs, "CronJob") == []


def test_calibration_reaches_the_runner_on_its_own_node_and_shares_its_stores(
    helm: Helm,
) -> None:
    docs = helm.template("three-nodes", VALUE_SETS["three-nodes"])
    (service,) = of_kind(docs, "Service")
    assert service["spec"]["internalTrafficPolicy"] == "Local"
    runner = runner_pod(docs)
    (daemonset,) = of_kind(docs, "DaemonSet")
    pod_labels = daemonset["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    port = service["spec"]["ports"][0]["port"]
    url = f"http://{service['metadata']['name']}.{NAMESPACE}.svc:{port}"
    assert parse_config(tomllib.loads(config_text(docs)), None).production_url == url

    runner_volumes = {v["name"]: v for v in runner["volumes"]}
    allowed = container(runner, "allowed")
    for _, spec in job_pods(docs, "Job"):
        (calibrate,) = spec["containers"]
        env, mounts = env_of(calibrate), mounts_of(calibrate)
        assert env["VIBEY_GH_PRODUCTION_URL"] == url
        volumes = {v["name"]: v for v in spec["volumes"]}
        # the node's model store and the cluster's evidence: the very volumes the runner uses
        assert mounts[env["OLLAMA_MODELS"] or ""] == "models"
        assert volumes["models"] == runner_volumes["models"]
        assert mounts[env["VIBEY_GH_SLOTS_DIR"] or ""] == "state"
        assert volumes["state"] == runner_volumes["state"]
        assert mounts_of(allowed)[env_of(allowed)["VIBEY_GH_SLOTS_DIR"] or ""] == "state"


def test_existing_claims_replace_the_chart_claim_and_host_path(helm: Helm) -> None:
    docs = helm.template("existing-claims", VALUE_SETS["existing-claims"])
    assert of_kind(docs, "PersistentVolumeClaim") == []
    for where, spec in pod_specs(docs):
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert volumes["models"] == {
            "name": "models",
            "persistentVolumeClaim": {"claimName": "ollama-models"},
        }, where
        assert volumes["state"]["persistentVolumeClaim"]["claimName"] == "vibey-evidence", where
    ((_, spec),) = job_pods(docs, "Job")
    assert "--if-requested" not in spec["containers"][0]["args"]
    corpus = env_of(spec["containers"][0])["VIBEY_GH_CORPUS"]
    assert corpus == "/var/lib/vibey-gh/slots/corpora/storm-65536.json"


def test_default_window_is_65536_everywhere(helm: Helm) -> None:
    assert chart_values()["window"] == 65536
    docs = helm.template("one-node", VALUE_SETS["one-node"])
    runner = runner_pod(docs)
    assert env_of(container(runner, "ollama"))["OLLAMA_CONTEXT_LENGTH"] == "65536"
    assert parse_config(tomllib.loads(config_text(docs)), None).window == 65536
    ((_, spec),) = job_pods(docs, "Job")
    args = spec["containers"][0]["args"]
    assert args[args.index("--window") + 1] == "65536"


def test_the_runners_ollama_settings_reach_the_config_the_calibration_and_allowed_read(
    helm: Helm,
) -> None:
    docs = helm.template("production-settings", VALUE_SETS["production-settings"])
    runner = runner_pod(docs)
    assert env_of(container(runner, "ollama"))["OLLAMA_KV_CACHE_TYPE"] == "q8_0"
    for key in ("vibey-gh.toml", STARTUP_TOML):
        config = parse_config(tomllib.loads(config_text(docs, key)), None)
        assert config.runner_env == {"OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_KV_CACHE_TYPE": "q8_0"}
    plain = parse_config(tomllib.loads(config_text(helm.template("defaults", {}))), None)
    assert plain.runner_env == {}


def test_custom_window_reaches_runner_config_and_calibration(helm: Helm) -> None:
    docs = helm.template("custom-window", VALUE_SETS["custom-window"])
    runner = runner_pod(docs)
    assert env_of(container(runner, "ollama"))["OLLAMA_CONTEXT_LENGTH"] == "131072"
    for key in ("vibey-gh.toml", STARTUP_TOML):
        config = parse_config(tomllib.loads(config_text(docs, key)), None)
        assert (config.window, config.concurrent_runs) == (131072, 2)
    ((_, spec),) = job_pods(docs, "Job")
    args = spec["containers"][0]["args"]
    assert args[args.index("--window") + 1] == "131072"
    assert args[args.index("--slots") + 1] == "1,1,2"
    env = env_of(spec["containers"][0])
    assert (env["VIBEY_GH_WINDOW"], env["VIBEY_GH_CORPUS"]) == (
        "131072",
        "/var/lib/vibey-gh/slots/corpus-131072.json",
    )


@pytest.mark.parametrize("name", VALUE_SETS)
def test_cron_jobs_appear_only_when_enabled(helm: Helm, name: str) -> None:
    docs = helm.template(name, VALUE_SETS[name])
    enabled = VALUE_SETS[name].get("calibration", {}).get("cronJob", {}).get("enabled", False)
    assert len(of_kind(docs, "CronJob")) == (len(nodes_of(name)) if enabled else 0)


def test_cron_jobs_recalibrate_each_node_weekly_one_at_a_time(helm: Helm) -> None:
    docs = helm.template("cronjob", VALUE_SETS["cronjob"])
    cron_jobs = job_pods(docs, "CronJob")
    default_schedule = chart_values()["calibration"]["cronJob"]["schedule"]
    minute, hour, day_of_month, month, day_of_week = default_schedule.split()
    assert (day_of_month, month) == ("*", "*") and day_of_week.isdigit()
    pinned = []
    for cron_job, spec in cron_jobs:
        assert cron_job["spec"]["schedule"] == default_schedule
        assert cron_job["spec"]["concurrencyPolicy"] == "Forbid"
        assert cron_job["spec"]["timeZone"] == "Etc/UTC"
        pinned.append(spec["nodeSelector"]["kubernetes.io/hostname"])
        # renewing fresh evidence means sweeping without waiting for a request
        assert "--if-requested" not in spec["containers"][0]["args"]
    assert sorted(pinned) == sorted(THREE_NODES)


@pytest.mark.parametrize("name", VALUE_SETS)
def test_every_pod_is_locked_down_with_resources(helm: Helm, name: str) -> None:
    docs = helm.template(name, VALUE_SETS[name])
    user = chart_values()["securityContext"]["runAsUser"]
    for where, spec in pod_specs(docs):
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] == user != 0, where
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, where
        assert spec["automountServiceAccountToken"] is False, where
        volumes = {v["name"]: v for v in spec["volumes"]}
        for item in containers_of(spec):
            where_exactly = f"{where} {item['name']}"
            context = item["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, where_exactly
            assert context["readOnlyRootFilesystem"] is True, where_exactly
            assert context["capabilities"] == {"drop": ["ALL"]}, where_exactly
            assert context["runAsNonRoot"] is True, where_exactly
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}, where_exactly
            for side in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(item["resources"][side]), where_exactly
            # with a read-only root, HOME and TMPDIR must be writable scratch volumes
            env, mounts = env_of(item), mounts_of(item)
            for variable in ("HOME", "TMPDIR"):
                volume = volumes[mounts[env[variable] or ""]]
                assert "emptyDir" in volume, f"{where_exactly} {variable}"


def test_runner_probes_ask_ollama_for_its_version(helm: Helm) -> None:
    runner = runner_pod(helm.template("defaults", VALUE_SETS["defaults"]))
    ollama = container(runner, "ollama")
    assert ollama["ports"] == [{"name": "http", "containerPort": 11434, "protocol": "TCP"}]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert ollama[probe]["httpGet"] == {"path": "/api/version", "port": "http"}, probe


def test_runner_slots_come_from_allowed_at_start(helm: Helm) -> None:
    docs = helm.template("three-nodes", VALUE_SETS["three-nodes"])
    runner = runner_pod(docs)
    (allowed,) = runner["initContainers"]
    ollama = container(runner, "ollama")
    assert allowed["command"][-1].endswith("/allowed-at-start.sh")
    assert ollama["command"][-1].endswith("/start-runner.sh")
    # the answer travels through one emptyDir: the start-up check writes it, and the follower
    # inside the runner container rewrites it before it restarts the runner
    answer_dir = env_of(allowed)["VIBEY_GH_ANSWER_DIR"]
    assert answer_dir == env_of(ollama)["VIBEY_GH_ANSWER_DIR"]
    volumes = {v["name"]: v for v in runner["volumes"]}
    assert mounts_of(allowed)[answer_dir or ""] == mounts_of(ollama)[answer_dir or ""] == "answer"
    assert "emptyDir" in volumes["answer"]
    (answer_mount,) = [m for m in ollama["volumeMounts"] if m["name"] == "answer"]
    assert answer_mount["readOnly"] is False
    fixed = container(runner_pod(helm.template("no-follow", VALUE_SETS["no-follow"])), "ollama")
    (fixed_mount,) = [m for m in fixed["volumeMounts"] if m["name"] == "answer"]
    assert fixed_mount["readOnly"] is True
    assert "VIBEY_GH_FOLLOW_SECONDS" not in env_of(fixed)
    assert "OLLAMA_NUM_PARALLEL" not in env_of(ollama)
    # same device as the runner: the fingerprint it computes must be the runner's
    assert allowed["resources"] == ollama["resources"] and allowed["image"] == ollama["image"]
    # before the runner exists, `allowed` talks to the private server the check starts
    startup_config = parse_config(tomllib.loads(config_text(docs, STARTUP_TOML)), None)
    port = env_of(allowed)["VIBEY_GH_STARTUP_PORT"]
    assert startup_config.production_url == f"http://127.0.0.1:{port}"
    assert env_of(allowed)["VIBEY_GH_CONFIG"] == f"/etc/vibey-gh/{STARTUP_TOML}"
    assert startup_config.concurrent_runs == "measured"


def test_scripts_config_map_carries_the_chart_files_verbatim(helm: Helm) -> None:
    docs = helm.template("defaults", VALUE_SETS["defaults"])
    (scripts,) = [
        d for d in of_kind(docs, "ConfigMap") if d["metadata"]["name"].endswith("-scripts")
    ]
    expected = {p.name: p.read_text(encoding="utf-8") for p in CHART_SCRIPTS.glob("*.sh")}
    assert scripts["data"] == expected


def test_gpu_node_selector_and_gpu_limits_reach_every_runner_side_pod(helm: Helm) -> None:
    docs = helm.template("gpu", VALUE_SETS["gpu"])
    runner = runner_pod(docs)
    assert runner["nodeSelector"] == {
        "nvidia.com/gpu.present": "true",
        "vibey-gh/model-node": "true",
    }
    ((_, job),) = job_pods(docs, "Job")
    assert job["nodeSelector"] == {
        "kubernetes.io/hostname": ONE_NODE[0],
        "nvidia.com/gpu.present": "true",
    }
    for item in [*containers_of(runner), *job["containers"]]:
        assert item["resources"]["limits"]["nvidia.com/gpu"] == 1, item["name"]
    plain = helm.template("one-node", VALUE_SETS["one-node"])
    assert "nvidia.com/gpu" not in json.dumps(plain)


@pytest.mark.parametrize("name", VALUE_SETS)
def test_rendered_config_is_accepted_by_the_project_loader(helm: Helm, name: str) -> None:
    docs = helm.template(name, VALUE_SETS[name])
    declared = VALUE_SETS[name].get("config", {}).get("concurrentRuns", 1)
    window = VALUE_SETS[name].get("window", 65536)
    for key in ("vibey-gh.toml", STARTUP_TOML):
        config = parse_config(tomllib.loads(config_text(docs, key)), None)
        assert config.runner == "ollama"
        assert config.model == chart_values()["model"]
        assert config.window == window
        assert config.concurrent_runs == declared
        assert config.runner_binary == "/usr/bin/ollama"
        assert config.stale_after_days == 30.0


def test_every_container_runs_the_one_image(helm: Helm) -> None:
    docs = helm.template("cronjob", VALUE_SETS["cronjob"])
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    images = {item["image"] for _, spec in pod_specs(docs) for item in containers_of(spec)}
    assert images == {f"vibey-gh:{chart['appVersion']}"}


@pytest.mark.parametrize("name", ["three-nodes", "cronjob", "long-node-names"])
def test_per_node_names_fit_kubernetes_limits_and_stay_distinct(helm: Helm, name: str) -> None:
    docs = helm.template(name, VALUE_SETS[name])
    dns_label = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    # a CronJob's name gets 11 characters appended for its Jobs
    for kind, limit in (("Job", 63), ("CronJob", 52)):
        names = [doc["metadata"]["name"] for doc in of_kind(docs, kind)]
        assert len(set(names)) == len(names)
        for object_name in names:
            assert len(object_name) <= limit and dns_label.match(object_name), object_name


BAD_VALUES = [
    (["--set", "window=abc"], "/window"),
    (["--set", "window=100"], "/window"),
    (["--set-json", 'calibration.nodes=["node-a","node-a"]'], "/calibration/nodes"),
    (["--set-json", 'calibration.nodes=["Node_A"]'], "/calibration/nodes/0"),
    (["--set", "config.concurrentRuns=many"], "/config/concurrentRuns"),
    (["--set", "calibration.nodez=node-a"], "nodez"),
    (["--set-json", 'runner.extraEnv=[{"name":"OLLAMA_NUM_PARALLEL","value":"4"}]'], "extraEnv"),
    (["--set", "modelStore.hostPath="], "/modelStore"),
    (["--set", "calibration.corpus=/etc/passwd"], "/calibration/corpus"),
    (["--set", "calibration.corpus=corpora/../../x.json"], "/calibration/corpus"),
]


@pytest.mark.parametrize(("flags", "named"), BAD_VALUES)
def test_bad_values_are_refused_naming_the_value(helm: Helm, flags: list[str], named: str) -> None:
    result = helm.run("template", "release", str(CHART), *flags)
    assert result.returncode != 0
    assert named in result.stderr, result.stderr
    assert "kind:" not in result.stdout


def test_chart_app_version_is_the_package_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert chart["appVersion"] == project["project"]["version"]


@pytest.mark.parametrize(("declaration", "warned"), [("1", True), ("measured", False)])
def test_install_notes_warn_when_jobs_can_find_no_request(
    helm: Helm, declaration: str, warned: bool
) -> None:
    result = helm.run(
        "install",
        "slots",
        str(CHART),
        "--dry-run=client",
        "--namespace",
        NAMESPACE,
        "--set",
        f"config.concurrentRuns={declaration}",
        "--set-json",
        f"calibration.nodes={json.dumps(ONE_NODE)}",
    )
    assert result.returncode == 0, result.stderr
    notes = result.stdout.partition("NOTES:")[2]
    assert "daemonset/slots-vibey-gh-runner" in notes
    assert ("no node asks to be measured" in notes) is warned


def test_runners_follow_their_answer_with_gauges_and_annotations(helm: Helm) -> None:
    docs = helm.template("operators", VALUE_SETS["operators"])
    runner = runner_pod(docs)
    ollama = container(runner, "ollama")
    env = env_of(ollama)
    # the follower lives in the runner container: the same device, GPU and memory limit
    assert [c["name"] for c in runner["containers"]] == ["ollama"]
    assert env["VIBEY_GH_FOLLOW_SECONDS"] == "120"
    assert env["VIBEY_GH_CONFIG"] == "/etc/vibey-gh/vibey-gh.toml"
    assert env["VIBEY_GH_ANNOTATE"] == "true"
    mounts = mounts_of(ollama)
    volumes = {v["name"]: v for v in runner["volumes"]}
    textfile = env["VIBEY_GH_TEXTFILE"] or ""
    assert volumes[mounts[str(Path(textfile).parent)]]["hostPath"] == {
        "path": "/var/lib/node-exporter/textfile",
        "type": "Directory",
    }
    assert mounts[env["VIBEY_GH_SLOTS_DIR"] or ""] == "state"
    token = volumes[mounts["/var/run/secrets/kubernetes.io/serviceaccount"]]
    assert {"serviceAccountToken", "configMap"} <= {
        k for s in token["projected"]["sources"] for k in s
    }
    assert runner["automountServiceAccountToken"] is False  # the start-up check gets no token
    (role,) = of_kind(docs, "Role")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "patch"]}]
    (binding,) = of_kind(docs, "RoleBinding")
    assert binding["subjects"][0]["name"] == runner["serviceAccountName"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    defaults = helm.template("defaults", VALUE_SETS["defaults"])
    assert of_kind(defaults, "Role") == [] and of_kind(defaults, "RoleBinding") == []
