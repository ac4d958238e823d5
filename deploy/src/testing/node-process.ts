// Use from test code only. A whole Strata node as a separate OS process, started through the real
// `strata` CLI, for tests that need real process boundaries (signals, exit codes, log output).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { testTlsDir } from '@strata/common/testing';

/** Path of the `strata` command (deploy/bin/strata.js). */
export const STRATA_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/strata.js');

export interface NodeProcess {
  child: ChildProcess;
  /** Directory holding the config file (and, unless the config says otherwise, the data). */
  dir: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Port of the gateway (when enabled) and of the ops server (when enabled). */
  gatewayPort?: number;
  opsPort?: number;
  /** http://127.0.0.1:<gatewayPort>. */
  baseUrl: string;
  /** Signs in through the gateway, waiting (bounded) for the leader to have provisioned users. */
  signIn(username: string, password: string): Promise<string>;
  /** SIGTERM (or `signal`), waits for exit (bounded: then SIGKILL), removes the directory. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Writes `config` (with `dataRoot` defaulting to a fresh temp dir) to a file, runs
 * `strata start --config FILE` and waits until the process reports it started. Throws with the
 * output if it exits or does not start within `startTimeoutMs`.
 */
export async function startNodeProcess(
  config: Record<string, unknown>,
  options: { startTimeoutMs?: number } = {},
): Promise<NodeProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-proc-'));
  const file = path.join(dir, 'strata.json');
  // Every process a test run starts trusts the run's one CA unless the test brings its own identity.
  writeFileSync(file, JSON.stringify({ dataRoot: dir, internalTls: { generateDir: testTlsDir() }, ...config }));
  const child = spawn(process.execPath, [STRATA_BIN, 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((c) => {
    exitCode = c;
  });
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  // Roles log through separate streams, so their lines may arrive in any order: wait for each.
  const wantGateway = (config.gateway as { enable?: boolean } | undefined)?.enable === true;
  const isUp = () => /"msg":"strata process started"/.test(out) && (!wantGateway || /"msg":"gateway listening"/.test(out));
  while (!isUp()) {
    if (exitCode !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`strata did not start (exit ${exitCode}):\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const gatewayPort = Number(/"port":(\d+),"msg":"gateway listening"/.exec(out)?.[1]) || undefined;
  const opsPort = Number(/"opsPort":(\d+)/.exec(out)?.[1]) || undefined;
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  return {
    child,
    dir,
    output: () => out,
    gatewayPort,
    opsPort,
    baseUrl,
    async signIn(username, password) {
      for (let attempt = 0; attempt < 100; attempt++) {
        const res = await fetch(`${baseUrl}/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, password }),
        });
        if (res.ok) return ((await res.json()) as { token: string }).token;
        await res.arrayBuffer();
        // 503 until a leader is elected; 401 until it has provisioned users (few attempts: the
        // sign-in throttle counts 401s).
        if (res.status !== 503 && !(res.status === 401 && attempt < 4)) throw new Error(`sign-in failed: ${res.status}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error('sign-in failed: no leader');
    },
    async stop(signal = 'SIGTERM') {
      if (exitCode === undefined) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
