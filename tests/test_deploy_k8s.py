"""deploy/k8s, checked offline: each overlay rendered by ``kubectl kustomize`` (or a standalone
``kustomize``), every object validated in strict mode against the Kubernetes JSON schemas that
the ``kubernetes-validate`` package bundles, then what the deployment needs checked on the
rendered objects (probes, replicas, security, the Service/HPA/PDB targets, Secrets, Redis)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("prod", "dev")
# the oldest Kubernetes minor the manifests promise to work on, and the newest bundled schema
VERSIONS = ("1.29", kubernetes_validate.utils.latest_version())

Doc = dict[str, Any]


def _kustomize() -> list[str] | None:
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    return None


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of deploy/k8s with each overlay's slack.env made from its example (the real one
    is git-ignored and holds the operator's tokens)."""
    command = _kustomize()
    if command is None:
        message = "kubectl (or kustomize) is needed to render deploy/k8s"
        if os.environ.get("CI"):
            pytest.fail(message + " (.ci/run's machine image ships kubectl)")
        pytest.skip(message)
    copy = tmp_path_factory.mktemp("k8s") / "k8s"
    shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("slack.env"))
    for overlay in OVERLAYS:
        example = copy / "overlays" / overlay / "slack.env.example"
        (copy / "overlays" / overlay / "slack.env").write_text(example.read_text())
    return copy


def render(tree: Path, path: str) -> list[Doc]:
    command = _kustomize()
    assert command is not None
    result = subprocess.run([*command, str(tree / path)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest, tree: Path) -> Iterator[tuple[str, list[Doc]]]:
    yield request.param, render(tree, f"overlays/{request.param}")


def one(docs: list[Doc], kind: str, name_prefix: str) -> Doc:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].startswith(name_prefix)]
    assert len(found) == 1, f"{kind} {name_prefix}: {len(found)} found"
    return found[0]


def by_name(docs: list[Doc], kind: str, name: str) -> Doc:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: {len(found)} found"
    return found[0]


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_every_object_is_valid_against_the_kubernetes_schemas(
        rendered: tuple[str, list[Doc]]) -> None:
    _, docs = rendered
    assert len(docs) >= 12
    for version in VERSIONS:
        for doc in docs:
            kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_catches_mistakes(rendered: tuple[str, list[Doc]]) -> None:
    _, docs = rendered
    deployment = yaml.safe_load(yaml.safe_dump(by_name(docs, "Deployment", "fitcheck")))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")  # a typo'd field name
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[0], strict=True)
    bad_replicas = yaml.safe_load(yaml.safe_dump(by_name(docs, "Deployment", "fitcheck")))
    bad_replicas["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad_replicas, VERSIONS[0], strict=True)


def test_everything_lands_in_the_overlays_namespace(rendered: tuple[str, list[Doc]]) -> None:
    overlay, docs = rendered
    namespace = by_name(docs, "Namespace", "fitcheck" if overlay == "prod" else "fitcheck-dev")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for doc in docs:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == namespace["metadata"]["name"], doc["kind"]


def _container(deployment: Doc) -> Doc:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: Doc = containers[0]
    return container


def _assert_hardened(workload: Doc, uid: int) -> None:
    pod = workload["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == uid
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    assert pod["automountServiceAccountToken"] is False
    for container in pod["containers"]:
        sc = container["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        resources = container["resources"]
        assert resources["requests"]["cpu"] and resources["requests"]["memory"]
        assert resources["limits"]["memory"]


def test_the_service_deployment(rendered: tuple[str, list[Doc]]) -> None:
    overlay, docs = rendered
    deployment = by_name(docs, "Deployment", "fitcheck")
    assert deployment["spec"]["replicas"] >= 2
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    container = _container(deployment)
    assert container["args"] == ["serve"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 8000}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["FITCHECK_HOST"] == "0.0.0.0" and env["FITCHECK_PORT"] == "8000"
    _assert_hardened(deployment, 10001)
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/tmp" in mounts  # writable scratch space under a read-only root
    image = container["image"]
    assert ":" in image and not image.endswith(":latest")
    if overlay == "prod":
        assert deployment["spec"]["replicas"] >= 3


def test_service_hpa_and_pdb_target_the_service_pods(rendered: tuple[str, list[Doc]]) -> None:
    _, docs = rendered
    deployment = by_name(docs, "Deployment", "fitcheck")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert selects(deployment["spec"]["selector"]["matchLabels"], pod_labels)
    service = by_name(docs, "Service", "fitcheck")
    assert selects(service["spec"]["selector"], pod_labels)
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    hpa = by_name(docs, "HorizontalPodAutoscaler", "fitcheck")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": "fitcheck"}
    assert 2 <= hpa["spec"]["minReplicas"] <= deployment["spec"]["replicas"] \
        < hpa["spec"]["maxReplicas"]
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    pdb = by_name(docs, "PodDisruptionBudget", "fitcheck")
    assert selects(pdb["spec"]["selector"]["matchLabels"], pod_labels)
    assert 1 <= pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"]
    # no Service selects anything but the service's pods (the bot has none)
    bot = by_name(docs, "Deployment", "fitcheck-bot")
    bot_labels = bot["spec"]["template"]["metadata"]["labels"]
    for svc in (d for d in docs if d["kind"] == "Service"):
        assert not selects(svc["spec"]["selector"], bot_labels)


def test_the_bot_runs_in_socket_mode_with_its_tokens_from_a_secret(
        rendered: tuple[str, list[Doc]]) -> None:
    _, docs = rendered
    bot = by_name(docs, "Deployment", "fitcheck-bot")
    container = _container(bot)
    assert container["args"] == ["bot"]  # no --http: Socket Mode
    assert container["ports"] == [{"name": "health", "containerPort": 3000, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    _assert_hardened(bot, 10001)
    refs = container["envFrom"]
    secret_name = next(r["secretRef"]["name"] for r in refs if "secretRef" in r)
    secret = by_name(docs, "Secret", secret_name)
    assert {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} <= set(secret["data"])
    config_name = next(r["configMapRef"]["name"] for r in refs if "configMapRef" in r)
    config = by_name(docs, "ConfigMap", config_name)
    service = by_name(docs, "Service", "fitcheck")
    assert config["data"]["FITCHECK_SERVICE_URL"] == f"http://{service['metadata']['name']}"


def test_every_referenced_config_map_and_secret_exists(rendered: tuple[str, list[Doc]]) -> None:
    _, docs = rendered
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for workload in (d for d in docs if d["kind"] in ("Deployment", "StatefulSet")):
        pod = workload["spec"]["template"]["spec"]
        for container in pod["containers"]:
            for ref in container.get("envFrom", []):
                kind, key = ("ConfigMap", "configMapRef") if "configMapRef" in ref \
                    else ("Secret", "secretRef")
                if not ref[key].get("optional"):
                    assert (kind, ref[key]["name"]) in names
        for volume in pod.get("volumes", []):
            if "configMap" in volume:
                assert ("ConfigMap", volume["configMap"]["name"]) in names


def test_redis_keeps_its_data_on_a_volume(rendered: tuple[str, list[Doc]]) -> None:
    _, docs = rendered
    redis = by_name(docs, "StatefulSet", "fitcheck-redis")
    assert redis["spec"]["replicas"] == 1
    claims = redis["spec"]["volumeClaimTemplates"]
    assert claims[0]["metadata"]["name"] == "data"
    container = _container(redis)
    assert {"name": "data", "mountPath": "/data"} in container["volumeMounts"]
    _assert_hardened(redis, 999)
    headless = by_name(docs, "Service", redis["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    config = one(docs, "ConfigMap", "fitcheck-redis-config")
    conf = dict(line.split(" ", 1) for line in config["data"]["redis.conf"].splitlines()
                if line and not line.startswith("#"))
    assert conf["appendonly"] == "yes" and conf["dir"] == "/data"
    assert conf["maxmemory-policy"].startswith("volatile-")
    # the service's FITCHECK_REDIS_URL names the Service in front of the Redis pod
    settings = one(docs, "ConfigMap", "fitcheck-config")["data"]
    host = settings["FITCHECK_REDIS_URL"].removeprefix("redis://").split(":")[0]
    redis_service = by_name(docs, "Service", host)
    assert selects(redis_service["spec"]["selector"],
                   redis["spec"]["template"]["metadata"]["labels"])
    policy = by_name(docs, "NetworkPolicy", "fitcheck-redis")
    assert selects(policy["spec"]["podSelector"]["matchLabels"],
                   redis["spec"]["template"]["metadata"]["labels"])
    allowed = [p["podSelector"]["matchLabels"] for p in policy["spec"]["ingress"][0]["from"]]
    for name in ("fitcheck", "fitcheck-bot"):  # the registry and cache; de-duplication
        pod = by_name(docs, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert any(selects(selector, pod) for selector in allowed), name


def test_the_base_renders_alone_without_redis_or_secrets(tree: Path) -> None:
    docs = render(tree, "base")
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == ["ConfigMap", "Deployment", "Deployment", "HorizontalPodAutoscaler",
                     "PodDisruptionBudget", "Service"]
    for doc in docs:
        kubernetes_validate.validate(doc, VERSIONS[0], strict=True)


def test_slack_env_files_are_git_ignored() -> None:
    for overlay in OVERLAYS:
        path = f"deploy/k8s/overlays/{overlay}/slack.env"
        result = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False,
                                capture_output=True, timeout=30)
        assert result.returncode == 0, f"{path} must be git-ignored (it holds tokens)"
