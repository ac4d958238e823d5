// Child processes of a bench (etcd and `strata start` roles): started with the tail of their
// stderr kept for the report if one exits early, stopped in reverse order (SIGTERM, then SIGKILL
// after 20 s). Used by bench/ingest/run.mjs and bench/query/bench-cluster.mjs. BENCH_STDOUT_DIR=<dir>
// keeps each process's stdout in <dir>/<name>.out (e.g. with BENCH_NODE_ARGS_GATEWAY='--trace-gc').
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import net from 'node:net';

/** A free loopback TCP port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export class BenchProcesses {
  children = [];

  /** Starts `command argv` in `cwd` with extra `env`; an unexpected exit is reported with its stderr. */
  start(name, command, argv, { cwd, env = {} } = {}) {
    const child = spawn(command, argv, {
      cwd,
      env: { ...process.env, ...env },
      stdio: [
        'ignore',
        process.env.BENCH_STDOUT_DIR ? openSync(`${process.env.BENCH_STDOUT_DIR}/${name}.out`, 'w') : 'ignore',
        'pipe',
      ],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    child.on('exit', (code, signal) => {
      if (!child.stopping) console.error(`${name} exited (${code ?? signal}): ${stderr}`);
    });
    this.children.push(child);
    return child;
  }

  /** Stops every process still running, last started first. */
  async stopAll() {
    for (const c of [...this.children].reverse()) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      c.stopping = true;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
  }
}
