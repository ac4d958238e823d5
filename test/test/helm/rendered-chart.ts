import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Certificate, Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, PersistentVolumeClaim, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import type { HelmBinary } from './helm-binary.js';

/**
 * Rendering the chart with helm and looking at the result the way Kubernetes would: objects
 * validated against the Kubernetes API schemas (kubernetes-models), workloads expanded into the pods
 * their replica counts make, and each pod's environment resolved as the kubelet does.
 */

/** A rendered Kubernetes object, loosely typed: the tests read the fields they check. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary JSON
  [k: string]: any;
};

function findRepoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 10; i++) {
    if (existsSync(path.join(dir, 'helm', 'strata', 'Chart.yaml'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('repository root with helm/strata not found');
}

export const REPO_ROOT = findRepoRoot();
export const CHART = path.join(REPO_ROOT, 'helm', 'strata');

/** Runs helm (bounded, no network: local chart, no dependencies); throws with helm's stderr on failure. */
export function runHelm(helm: HelmBinary, args: string[]): string {
  try {
    return execFileSync(helm.file, args, {
      encoding: 'utf8',
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: helm.home,
        HELM_CACHE_HOME: path.join(helm.home, 'cache'),
        HELM_CONFIG_HOME: path.join(helm.home, 'config'),
        HELM_DATA_HOME: path.join(helm.home, 'data'),
      },
    });
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`helm ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  valuesFiles?: string[];
  set?: string[];
  setJson?: string[];
}

export function renderChart(helm: HelmBinary, opts: RenderOptions = {}): K8sObject[] {
  const args = ['template', opts.release ?? 'strata', CHART, '--namespace', opts.namespace ?? 'observability'];
  for (const f of opts.valuesFiles ?? []) args.push('--values', f);
  for (const s of opts.set ?? []) args.push('--set', s);
  for (const s of opts.setJson ?? []) args.push('--set-json', s);
  const text = runHelm(helm, args);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${doc.errors[0]!.message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value as K8sObject);
  }
  return objects;
}

type Validatable = { validate(): void };
const MODELS: Record<string, new (data: never) => Validatable> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'cert-manager.io/v1/Certificate': Certificate,
  'cert-manager.io/v1/Issuer': Issuer,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** Validates every object against its Kubernetes API schema; an object of a kind without a model is an error too. */
export function validateObjects(objects: K8sObject[]): void {
  for (const obj of objects) {
    const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
    if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind} (${obj.metadata?.name}): add its model to the test`);
    try {
      new Model(obj as never).validate();
    } catch (err) {
      throw new Error(`${obj.kind} ${obj.metadata.name} is not a valid Kubernetes object: ${(err as Error).message}`);
    }
  }
}

export function find(objects: K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}

/** One pod a workload makes: StatefulSet pods are `<name>-<ordinal>`; Deployment pods get stand-in names. */
export interface PodInstance {
  workload: K8sObject;
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: a pod template spec
  spec: any;
  labels: Record<string, string>;
}

export function podsOf(workload: K8sObject): PodInstance[] {
  const replicas: number = workload.spec.replicas ?? 1;
  return Array.from({ length: replicas }, (_, i) => ({
    workload,
    name: workload.kind === 'StatefulSet' ? `${workload.metadata.name}-${i}` : `${workload.metadata.name}-7d9f8-${i}`,
    spec: workload.spec.template.spec,
    labels: workload.spec.template.metadata.labels,
  }));
}

/** ENV lines of the final stage of deploy/Dockerfile: the environment every container starts from. */
export function imageEnv(): Record<string, string> {
  const text = readFileSync(path.join(REPO_ROOT, 'deploy', 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const finalStage = text.slice(text.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const line of finalStage.split('\n')) {
    const m = /^ENV\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const pair of m[1]!.trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

/**
 * The environment a container of `pod` sees, resolved like the kubelet: the image's ENV, then the
 * container's `env` in order, `$(VAR)` expanded from variables defined before it (`$$` escapes),
 * fieldRef from the pod, secretKeyRef from rendered Secrets or from `externalSecrets` (Secrets
 * that exist outside the chart, keyed `name/key`).
 */
export function containerEnv(
  pod: PodInstance,
  // biome-ignore lint/suspicious/noExplicitAny: a container spec
  container: any,
  ctx: { namespace: string; objects: K8sObject[]; externalSecrets?: Record<string, string> },
): Record<string, string> {
  const env: Record<string, string> = { ...imageEnv() };
  const defined: Record<string, string> = {};
  for (const item of container.env ?? []) {
    let value: string;
    if (typeof item.value === 'string') {
      value = item.value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole: string, name?: string) =>
        whole === '$$' ? '$' : name !== undefined && name in defined ? defined[name]! : whole,
      );
    } else if (item.valueFrom?.fieldRef) {
      const fieldPath = item.valueFrom.fieldRef.fieldPath;
      if (fieldPath === 'metadata.name') value = pod.name;
      else if (fieldPath === 'metadata.namespace') value = ctx.namespace;
      else throw new Error(`unsupported fieldRef ${fieldPath}`);
    } else if (item.valueFrom?.secretKeyRef) {
      const { name, key } = item.valueFrom.secretKeyRef;
      const secret = find(ctx.objects, 'Secret', name);
      if (secret) {
        const data = secret.data?.[key];
        if (typeof data !== 'string') throw new Error(`Secret ${name} has no key ${key}`);
        value = Buffer.from(data, 'base64').toString('utf8');
      } else {
        const external = ctx.externalSecrets?.[`${name}/${key}`];
        if (external === undefined) throw new Error(`Secret ${name} (key ${key}) is neither rendered nor given as external`);
        value = external;
      }
    } else {
      throw new Error(`unsupported env source for ${item.name}`);
    }
    defined[item.name] = value;
    env[item.name] = value;
  }
  return env;
}
