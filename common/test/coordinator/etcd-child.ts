// A separate process holding etcd state for the EtcdCoordinator tests, so that a test can SIGKILL
// it and see what etcd does when a holder dies without resigning or revoking.
// Usage: node etcd-child.js <endpoint> <prefix> <ttl> campaign <election> <value>
//        node etcd-child.js <endpoint> <prefix> <ttl> worker <endpoint-of-worker>
// Prints one JSON line per event on stdout.
import { createLogger, EtcdCoordinator } from '../../src/index.js';

const [endpoint, prefix, ttl, mode, name, value] = process.argv.slice(2);
const coord = new EtcdCoordinator(
  { endpoints: [endpoint!], prefix: prefix!, leaseTtlSeconds: Number(ttl) },
  createLogger('test-child', { level: 'silent' }),
);
const say = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(event)}\n`);
};

if (mode === 'campaign') {
  await coord.campaign(name!, value!, {
    onElected: (term) => say({ event: 'elected', term }),
    onDemoted: (reason) => say({ event: 'demoted', reason }),
  });
  say({ event: 'campaigning' });
} else if (mode === 'worker') {
  await coord.registerWorker({ endpoint: name!, freeBytes: 42, writable: true });
  say({ event: 'registered' });
} else {
  throw new Error(`unknown mode ${mode}`);
}
// Stay alive until killed.
setInterval(() => {}, 60_000);
