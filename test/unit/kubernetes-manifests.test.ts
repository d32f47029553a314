import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { configFromEnv } from "../../sandbox-runner/src/config";
import { EXECUTION_LIMITS } from "../../src/domain/executions";
import { RUNNER_BACKLOG_ROUTE, runnerBacklog } from "../../src/domain/runner-backlog";
import { RUN_LIMITS } from "../../src/domain/runs";
import { type Manifest, renderKustomization, resourceId } from "../support/node/kustomize";

// deploy/kubernetes/ (docs/deploy-runners.md), rendered here without a kustomize binary, held
// to the Kubernetes and KEDA schemas and to the runner's own configuration and server.
const ROOT = resolve(import.meta.dirname, "../..");
const KUBE = join(ROOT, "deploy/kubernetes");
const RENDERS = ["base", ...readdirSync(join(KUBE, "overlays")).map((o) => `overlays/${o}`)];
const rendered = Object.fromEntries(RENDERS.map((r) => [r, renderKustomization(join(KUBE, r))])) as Record<string, Manifest[]>;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
// Each class validates against its own kind and API version, so a resource of another is refused.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
  "keda.sh/v1alpha1/TriggerAuthentication": TriggerAuthentication,
};

const one = (ms: Manifest[], kind: string): Json => {
  const found = ms.filter((m) => m.kind === kind);
  expect(found.map(resourceId)).toHaveLength(1);
  return found[0] as Json;
};

/** The environment variables sandbox-runner/src/config.ts reads: the keys of its envSchema. */
function runnerEnvKeys(): Set<string> {
  const source = readFileSync(join(ROOT, "sandbox-runner/src/config.ts"), "utf8");
  const block = /const envSchema = z\.object\(\{([\s\S]*?)\n\}\);/.exec(source)?.[1] ?? "";
  return new Set([...block.matchAll(/^\s*([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1] as string));
}

/** The runner's health route, from its server's request handler. */
function runnerHealthPath(): string {
  const source = readFileSync(join(ROOT, "sandbox-runner/src/server.ts"), "utf8");
  const paths = [...source.matchAll(/path === "([^"]+)" && req\.method === "GET"/g)].map((m) => m[1]);
  expect(paths).toContain("/health");
  return "/health";
}

/** The Worker's API base, from src/app.ts (which imports the Worker's runtime, so it is read, not imported). */
function apiBase(): string {
  return /export const API_BASE = "([^"]+)"/.exec(readFileSync(join(ROOT, "src/app.ts"), "utf8"))?.[1] ?? "";
}

/** The longest wall clock of any runner job (docs/limits.md): runs, live executions, and prepare and scoring jobs (300 s). */
const LONGEST_JOB_SECONDS = Math.max(RUN_LIMITS.timeoutSeconds.max, EXECUTION_LIMITS.timeoutSeconds.max, 300);

describe.each(RENDERS)("deploy/kubernetes/%s", (name) => {
  const manifests = rendered[name] as Manifest[];
  const deployment = one(manifests, "Deployment");
  const pod = deployment.spec.template.spec as Json;
  const container = (pod.containers as Json[]).find((c) => c.name === "runner") as Json;
  const configMap = (manifests.find((m) => m.kind === "ConfigMap" && m.metadata.name === container.envFrom?.[0]?.configMapRef?.name) ?? {}) as Json;
  const settings = (configMap.data ?? {}) as Record<string, string>;
  /** The Secrets of the base: the production overlay leaves them to be made out of band, with these keys. */
  const secrets = [...manifests, ...(rendered.base as Manifest[])].filter((m) => m.kind === "Secret") as Json[];

  it("every resource validates against its Kubernetes or KEDA model", () => {
    expect(manifests.length).toBeGreaterThan(0);
    for (const m of manifests) {
      const Model = MODELS[`${m.apiVersion}/${m.kind}`];
      expect(Model, `no model for ${m.apiVersion} ${m.kind}`).toBeDefined();
      expect(() => new Model!(m as never).validate(), resourceId(m)).not.toThrow();
      expect(m.metadata.namespace ?? (m.kind === "Namespace" ? m.metadata.name : undefined), resourceId(m)).toBe("assay-runners");
    }
  });

  it("sets only variables the runner reads, and the runner accepts their values", () => {
    const known = runnerEnvKeys();
    expect(known).toContain("RUNNER_SECRET");
    expect(known).toContain("RUNNER_PORT");
    const names = [...Object.keys(settings), ...((container.env ?? []) as Json[]).map((e) => e.name as string)];
    expect(names.filter((n) => !known.has(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    expect(((container.envFrom ?? []) as Json[]).every((e) => e.configMapRef && !e.prefix)).toBe(true);
    expect((container.env as Json[]).find((e) => e.name === "RUNNER_SECRET")?.valueFrom?.secretKeyRef).toBeDefined();

    const config = configFromEnv({ ...settings, RUNNER_SECRET: "a-test-secret-of-32-characters!!" });
    expect(config.host).toBe("0.0.0.0");
    expect(config.workDir).toBe(settings.RUNNER_WORK_DIR);
    expect(config.unsafeNoSandbox).toBe(false);
  });

  it("serves on the runner's port and probes its health route", () => {
    const port = Number(settings.RUNNER_PORT);
    const health = runnerHealthPath();
    const ports = container.ports as Json[];
    expect(ports).toEqual([{ name: "http", containerPort: port, protocol: "TCP" }]);
    const portOf = (p: number | string) => (typeof p === "number" ? p : ports.find((x) => x.name === p)?.containerPort);
    for (const probe of ["startupProbe", "livenessProbe"]) {
      expect(container[probe].httpGet.path, probe).toBe(health);
      expect(portOf(container[probe].httpGet.port), probe).toBe(port);
    }
    // Readiness reads the health status (a "degraded" runner answers 200 too).
    const command = (container.readinessProbe.exec.command as string[]).join(" ");
    expect(command).toContain(`http://127.0.0.1:${port}${health}`);
    expect(command).toContain("h.status === 'ok'");

    const service = one(manifests, "Service");
    expect(service.spec.ports.map((p: Json) => portOf(p.targetPort))).toEqual([port]);
    const policy = one(manifests, "NetworkPolicy");
    expect(policy.spec.ingress.flatMap((r: Json) => r.ports.map((p: Json) => p.port))).toEqual([port]);
  });

  it("works in an emptyDir at RUNNER_WORK_DIR, drains within its grace period, and carries no API token", () => {
    const mount = (container.volumeMounts as Json[]).find((v) => v.mountPath === settings.RUNNER_WORK_DIR);
    expect(mount).toBeDefined();
    expect((pod.volumes as Json[]).find((v) => v.name === mount?.name)?.emptyDir).toBeDefined();

    const drain = Number(settings.RUNNER_DRAIN_SECONDS);
    expect(drain).toBeGreaterThan(LONGEST_JOB_SECONDS);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drain + 30);

    expect(pod.automountServiceAccountToken).toBe(false);
    expect(one(manifests, "ServiceAccount").automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe(one(manifests, "ServiceAccount").metadata.name);
  });

  it("holds the rules Kubernetes checks on the security context that the schemas do not", () => {
    const security = container.securityContext as Json;
    const added = (security.capabilities?.add ?? []) as string[];
    expect(security.capabilities?.drop).toEqual(["ALL"]);
    expect(added).toContain("SYS_ADMIN");
    expect(security.privileged).toBeUndefined();
    // Kubernetes refuses allowPrivilegeEscalation: false beside CAP_SYS_ADMIN.
    expect(security.allowPrivilegeEscalation).toBeUndefined();
    // An unmasked /proc only in a user namespace of the pod's own.
    if (security.procMount === "Unmasked") expect(pod.hostUsers).toBe(false);
    if (!name.endsWith("no-userns")) expect([pod.hostUsers, security.procMount]).toEqual([false, "Unmasked"]);
    // The slots' uids (61000 + slot, pool of at most 64) fit in a user namespace's 65536.
    expect(61000 + Number(settings.RUNNER_POOL_SIZE)).toBeLessThan(65536);
  });

  it("sizes requests and limits for the pool (docs/deploy-runners.md, \"Sizing\")", () => {
    const pool = Number(settings.RUNNER_POOL_SIZE);
    const gib = (q: string) => Number(/^(\d+)Gi$/.exec(q)?.[1]);
    const { requests, limits } = container.resources as Json;
    expect(Number(requests.cpu)).toBe(pool);
    expect(Number(limits.cpu)).toBe(2 * pool);
    expect(gib(requests.memory)).toBe(1.5 * pool);
    expect(gib(limits.memory)).toBe(2 * pool + 2);
    const emptyDirs = (pod.volumes as Json[]).reduce((sum, v) => sum + (v.emptyDir?.sizeLimit?.endsWith("Gi") ? gib(v.emptyDir.sizeLimit) : 0), 0);
    expect(gib(limits["ephemeral-storage"])).toBeGreaterThan(emptyDirs);
  });

  it("references only Secret keys that exist, and the placeholders can never be used", () => {
    const refs: { secret: string; key: string }[] = [
      ...((container.env ?? []) as Json[]).filter((e) => e.valueFrom?.secretKeyRef).map((e) => ({ secret: e.valueFrom.secretKeyRef.name, key: e.valueFrom.secretKeyRef.key })),
      ...manifests.filter((m) => m.kind === "TriggerAuthentication").flatMap((m) => (m as Json).spec.secretTargetRef.map((r: Json) => ({ secret: r.name, key: r.key }))),
    ];
    expect(refs.length).toBe(2);
    for (const ref of refs) {
      const secret = secrets.find((s) => s.metadata.name === ref.secret);
      expect(secret, ref.secret).toBeDefined();
      expect(Object.keys({ ...secret?.data, ...secret?.stringData }), ref.secret).toContain(ref.key);
    }
    for (const s of manifests.filter((m) => m.kind === "Secret") as Json[]) {
      for (const value of Object.values({ ...s.stringData }) as string[]) expect(value).toBe("REPLACE_ME");
      expect(s.data).toBeUndefined();
    }
    expect(() => configFromEnv({ ...settings, RUNNER_SECRET: "REPLACE_ME" })).toThrow(/RUNNER_SECRET/);
    if (name !== "base") expect(manifests.filter((m) => m.kind === "Secret")).toEqual([]);
  });

  it("scales the Deployment on the Worker's backlog route, with its own token", () => {
    const scaled = one(manifests, "ScaledObject");
    expect(scaled.spec.scaleTargetRef).toMatchObject({ kind: "Deployment", name: deployment.metadata.name });
    expect(deployment.spec.replicas).toBeUndefined();
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    expect(scaled.spec.maxReplicaCount).toBeGreaterThan(scaled.spec.minReplicaCount);
    const [trigger, ...others] = scaled.spec.triggers as Json[];
    expect(others).toEqual([]);
    expect(trigger?.type).toBe("metrics-api");
    expect(new URL(trigger?.metadata.url).pathname).toBe(`${apiBase()}${RUNNER_BACKLOG_ROUTE}`);
    expect(new URL(trigger?.metadata.url).protocol).toBe("https:");
    expect(runnerBacklog([], 0)).toHaveProperty(trigger?.metadata.valueLocation);
    expect(trigger?.metadata.authMode).toBe("bearer");
    const auth = manifests.find((m) => m.kind === "TriggerAuthentication" && m.metadata.name === trigger?.authenticationRef?.name) as Json | undefined;
    expect(auth?.spec.secretTargetRef.map((r: Json) => r.parameter)).toEqual(["token"]);
    // KEDA's credential is not the runner's signing key.
    expect(auth?.spec.secretTargetRef[0].name).not.toBe((container.env as Json[]).find((e) => e.name === "RUNNER_SECRET")?.valueFrom.secretKeyRef.name);
  });

  it("selects the runner pods alone, and lets them reach only DNS and port 443", () => {
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(matches(deployment.spec.selector.matchLabels)).toBe(true);
    expect(matches(one(manifests, "Service").spec.selector)).toBe(true);
    expect(matches(one(manifests, "PodDisruptionBudget").spec.selector.matchLabels)).toBe(true);
    expect(one(manifests, "PodDisruptionBudget").spec.maxUnavailable).toBe(1);
    const policy = one(manifests, "NetworkPolicy");
    expect(matches(policy.spec.podSelector.matchLabels)).toBe(true);
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    const egressPorts = (policy.spec.egress as Json[]).map((r) => r.ports.map((p: Json) => `${p.port}/${p.protocol}`).join(","));
    expect(egressPorts).toEqual(["53/UDP,53/TCP", "443/TCP", "443/TCP"]);
    for (const rule of policy.spec.egress as Json[]) expect(rule.to.length).toBeGreaterThan(0);
  });
});
