import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Where Debian's `etcd-server` package installs etcd (`apt-get install -y etcd-server`). */
const ETCD_BINARY = '/usr/bin/etcd';

export interface EtcdServer {
  /** Client URL to put in `etcd.endpoints`, e.g. `http://127.0.0.1:41234`. */
  readonly endpoint: string;
  readonly dataDir: string;
  /** Kills etcd and removes its data directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface EtcdServerOptions {
  binary?: string;
  /** Bound on start-up until etcd reports healthy. */
  startTimeoutMs?: number;
  /**
   * Serve clients over TLS and demand a client certificate signed by `caFile` (etcd's
   * --client-cert-auth): the server certificate must name 127.0.0.1.
   */
  tls?: { caFile: string; certFile: string; keyFile: string };
}

/** Every etcd started by this process, killed on exit if a test forgot to stop it. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** A port that was free a moment ago on 127.0.0.1 (etcd cannot bind port 0 and report it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a real single-member etcd on free loopback ports with a temporary data directory and
 * waits until it answers /health. Retries with new ports if one was taken in between.
 */
export async function startEtcd(options: EtcdServerOptions = {}): Promise<EtcdServer> {
  const binary = options.binary ?? ETCD_BINARY;
  if (!existsSync(binary)) {
    throw new Error(`${binary} not found: install it with "apt-get install -y etcd-server"`);
  }
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(binary, options.startTimeoutMs ?? 30_000, options.tls);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function startOnce(binary: string, startTimeoutMs: number, tls: EtcdServerOptions['tls']): Promise<EtcdServer> {
  const [clientPort, peerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strata-etcd-'));
  const clientUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  // Health is read from a plain metrics listener, so the check needs no client certificate.
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  const tlsFlags = tls
    ? [`--cert-file=${tls.certFile}`, `--key-file=${tls.keyFile}`, `--trusted-ca-file=${tls.caFile}`, '--client-cert-auth']
    : [];
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const name = `strata-test-${process.pid}`;
  const child = spawn(
    binary,
    [
      `--name=${name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${name}=${peerUrl}`,
      '--initial-cluster-state=new',
      `--listen-metrics-urls=${metricsUrl}`,
      ...tlsFlags,
      '--logger=zap',
      '--log-outputs=stderr',
      '--log-level=warn',
    ],
    // etcd reads ETCD_* variables as flags: give it a clean environment.
    { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  );
  running.add(child);
  installExitHook();
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-2000);
  });
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      running.delete(child);
      resolve();
    });
  });

  let stopped = false;
  const stop = async () => {
    if (!stopped) {
      stopped = true;
      if (!exited) child.kill('SIGKILL');
      await exitedPromise;
      rmSync(dataDir, { recursive: true, force: true });
    }
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`etcd exited during start-up: ${stderrTail.trim().split('\n').slice(-3).join(' | ')}`);
    }
    if (await healthy(metricsUrl)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`etcd did not become healthy within ${startTimeoutMs} ms on ${clientUrl}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { endpoint: clientUrl, dataDir, stop };
}

async function healthy(clientUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { health?: string };
    return res.ok && body.health === 'true';
  } catch {
    return false;
  }
}
