import { parseArgs } from 'node:util';
import { ConfigError, loadConfigFile, loadConfigObject, type ResolvedConfig } from '@strata/common';
import { PLACEMENTS_USAGE, placementsCommand } from './placements-command.js';
import { startProcess } from './process-runner.js';
import { DEFAULT_ADMIN_USER_NAME, singleNodeConfig } from './single-node-config.js';
import { generateTlsFiles } from './tls-command.js';
import { WORKERS_USAGE, workersCommand } from './workers-command.js';

const USAGE = `Usage:
  strata start [--config FILE]   Start every role FILE enables; without --config, a single node
                                 (every role, data in ./data, HTTP on port 5000).
  strata check-config --config FILE
                                 Validate FILE (and STRATA_* overrides) and print every problem.
  strata tls generate --out DIR [--days N]
                                 Write the internal mutual-TLS files: ca.crt/ca.key (kept if
                                 present: a re-run rotates the role certificates under the same
                                 CA) and <role>.crt/.key for database, backend and gateway.
${PLACEMENTS_USAGE}
${WORKERS_USAGE}
  strata --help`;

/** Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid configuration. */
export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
        out: { type: 'string' },
        days: { type: 'string' },
        account: { type: 'string' },
        worker: { type: 'string' },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (parsed.values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return parsed.values.help ? 0 : 2;
  }
  const file = parsed.values.config as string | undefined;
  if (command === 'check-config') {
    if (!file) {
      process.stderr.write(`check-config needs --config FILE\n${USAGE}\n`);
      return 2;
    }
    const config = loadOrReport(() => loadConfigFile(file));
    if (!config) return 2;
    process.stdout.write(`${file}: valid\n`);
    return 0;
  }
  if (command === 'tls') return tlsCommand(parsed.positionals[1], parsed.values.out as string, parsed.values.days as string);
  if (command === 'placements') {
    if (!file) {
      process.stderr.write(`placements needs --config FILE\n${USAGE}\n`);
      return 2;
    }
    const config = loadOrReport(() => loadConfigFile(file));
    if (!config) return 2;
    return placementsCommand(
      config,
      {
        action: parsed.positionals[1],
        account: parsed.values.account as string | undefined,
        worker: parsed.values.worker as string | undefined,
      },
      (line) => process.stdout.write(`${line}\n`),
    );
  }
  if (command === 'workers') {
    if (!file) {
      process.stderr.write(`workers needs --config FILE\n${USAGE}\n`);
      return 2;
    }
    const config = loadOrReport(() => loadConfigFile(file));
    if (!config) return 2;
    return workersCommand(config, { action: parsed.positionals[1], workerId: parsed.positionals[2] }, (text) =>
      process.stdout.write(`${text}\n`),
    );
  }
  if (command !== 'start') {
    process.stderr.write(`unknown command: ${command}\n${USAGE}\n`);
    return 2;
  }
  let config: ResolvedConfig | undefined;
  let singleNode: ReturnType<typeof singleNodeConfig> | undefined;
  if (file) {
    config = loadOrReport(() => loadConfigFile(file));
  } else {
    singleNode = singleNodeConfig(process.env.STRATA_DATAROOT ?? './data');
    config = loadOrReport(() => loadConfigObject(singleNode!.raw));
  }
  if (!config) return 2;

  const running = await startProcess(config);
  if (singleNode && config.gateway.enable) printSignIn(config, singleNode.passwordFile, singleNode.firstStart);

  return await new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`${signal} received: draining and stopping\n`);
      // A stuck role must not keep the process alive forever.
      const deadline = setTimeout(() => resolve(1), 30_000);
      deadline.unref();
      running.stop().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}

function tlsCommand(sub: string | undefined, out: string | undefined, daysText: string | undefined): number {
  const days = daysText === undefined ? 825 : Number(daysText);
  if (sub !== 'generate' || !out || !Number.isInteger(days) || days < 1) {
    process.stderr.write(`tls generate needs --out DIR and, optionally, --days N (a whole number ≥ 1)\n${USAGE}\n`);
    return 2;
  }
  try {
    const { caCreated, files } = generateTlsFiles(out, days);
    process.stdout.write(
      `${caCreated ? 'created a new CA' : 'kept the existing CA'}; wrote:\n${files.map((f) => `  ${f}`).join('\n')}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 1;
  }
}

function loadOrReport(load: () => ResolvedConfig): ResolvedConfig | undefined {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return undefined;
    }
    throw err;
  }
}

function printSignIn(config: ResolvedConfig, passwordFile: string, firstStart: boolean): void {
  const base = `http://localhost:${config.gateway.port}`;
  process.stdout.write(
    [
      '',
      `Strata is running: ${base}  (health: ${base}/healthz)`,
      `${firstStart ? 'Created' : 'Using'} the admin user "${DEFAULT_ADMIN_USER_NAME}"; its password is in ${passwordFile}`,
      'Sign in:',
      `  curl -s -X POST ${base}/auth/token -H 'content-type: application/json' \\`,
      `    -d "{\\"username\\":\\"${DEFAULT_ADMIN_USER_NAME}\\",\\"password\\":\\"$(cat ${passwordFile})\\"}"`,
      '',
    ].join('\n'),
  );
}
