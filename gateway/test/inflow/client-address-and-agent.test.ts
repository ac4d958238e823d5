import assert from 'node:assert/strict';
import { agentIdentity } from '../../src/inflow/agent-identity.js';
import { ClientAddressResolver } from '../../src/inflow/client-address.js';

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name] ?? '' });

describe('inflow source address and agent', () => {
  it('trusts X-Forwarded-For only from configured proxies, reading from the right', () => {
    const none = new ClientAddressResolver([]);
    assert.equal(none.resolve('::ffff:10.0.0.5', '1.2.3.4'), '10.0.0.5');
    const r = new ClientAddressResolver(['10.0.0.0/8', '192.168.1.1', 'fd00::/8']);
    assert.equal(r.resolve('203.0.113.9', '1.2.3.4'), '203.0.113.9', 'untrusted peer: header ignored');
    assert.equal(r.resolve('10.1.2.3', '1.2.3.4'), '1.2.3.4');
    assert.equal(r.resolve('10.1.2.3', '6.6.6.6, 1.2.3.4, 192.168.1.1'), '1.2.3.4', 'a forged left part is not used');
    assert.equal(r.resolve('fd00::1', '2001:db8::7'), '2001:db8::7');
    assert.equal(r.resolve('10.1.2.3', 'garbage'), '10.1.2.3');
    assert.equal(r.resolve('10.1.2.3', undefined), '10.1.2.3');
    assert.throws(() => new ClientAddressResolver(['not-an-ip']), /trustedProxies/);
  });

  it('recognises agents by header or user agent, and nothing else', () => {
    assert.equal(agentIdentity(headers({ 'x-strata-agent': 'collector-7' })), 'collector-7');
    assert.equal(agentIdentity(headers({ 'x-ls-agent-deviceid': 'ABCDEF0123' })), 'ABCDEF0123');
    assert.equal(agentIdentity(headers({ 'user-agent': 'logship-agent/1.2.3' })), 'logship-agent/1.2.3');
    assert.equal(agentIdentity(headers({ 'user-agent': 'curl/8.0' })), null);
    assert.equal(agentIdentity(headers({ 'user-agent': 'logsh/0.9' })), null);
    assert.equal(agentIdentity(headers({ 'x-strata-agent': ' a\u0007b ' })), 'ab');
    assert.equal(agentIdentity(headers({ 'x-strata-agent': 'x'.repeat(300) }))!.length, 256);
  });
});
