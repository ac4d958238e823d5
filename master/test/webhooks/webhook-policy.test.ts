import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { slackBody, webhookSignature } from '../../src/webhooks/webhook-payload.js';
import { classify } from '../../src/webhooks/webhook-sender.js';
import { blockedAddress, checkWebhookUrl, guardedLookup } from '../../src/webhooks/webhook-target.js';

const strict = { allowPlainHttpHosts: [], allowInternalHosts: [] };

describe('webhook policy', () => {
  it('refuses loopback, link-local, metadata and other special addresses, not public or private ones', () => {
    for (const a of [
      '127.0.0.1',
      '127.5.5.5',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '224.0.0.1',
      '100.100.100.200',
    ])
      assert.ok(blockedAddress(a), a);
    for (const a of ['93.184.216.34', '10.1.2.3', '192.168.1.10', '172.16.0.5', '2001:db8::1', 'fd12::1'])
      assert.equal(blockedAddress(a), undefined, a);
  });

  it('checks scheme, credentials and address literals on save, with the operator allow lists', () => {
    assert.equal(checkWebhookUrl('https://hooks.example.test/x', strict).hostname, 'hooks.example.test');
    assert.throws(() => checkWebhookUrl('http://hooks.example.test/x', strict), /must use https/);
    assert.equal(
      checkWebhookUrl('http://hooks.example.test/x', { ...strict, allowPlainHttpHosts: ['hooks.example.test'] }).protocol,
      'http:',
    );
    assert.throws(() => checkWebhookUrl('https://169.254.169.254/', strict), /metadata/);
    assert.ok(checkWebhookUrl('https://127.0.0.1:8443/', { ...strict, allowInternalHosts: ['127.0.0.1'] }));
    assert.throws(() => checkWebhookUrl('https://a:b@hooks.example.test/', strict), /user name or password/);
    assert.throws(() => checkWebhookUrl('ftp://hooks.example.test/', strict), /must use https/);
  });

  it('refuses in the lookup itself a name that resolves to a blocked address', async () => {
    const lookup = guardedLookup(strict);
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', {}, (e) => resolve(e)));
    assert.equal(err?.code, 'EBLOCKED');
    const allowed = guardedLookup({ ...strict, allowInternalHosts: ['localhost'] });
    const address = await new Promise<string>((resolve, reject) =>
      allowed('localhost', {}, (e, a) => (e ? reject(e) : resolve(a as string))),
    );
    assert.ok(blockedAddress(address));
  });

  it('signs "<timestamp>.<body>" with HMAC-SHA256', () => {
    const expected = createHmac('sha256', 'k').update('1700000000.{"a":1}').digest('hex');
    assert.equal(webhookSignature('k', '1700000000', '{"a":1}'), `v1=${expected}`);
  });

  it('renders the Slack text with mrkdwn escapes', () => {
    const body = JSON.parse(
      slackBody({
        type: 'ALERT_RESOLVED',
        occurredAt: '',
        accountId: 'x',
        alert: { alertId: 'r', alertRecordId: 'rec', ruleName: 'CPU <high>', dimensions: { host: 'a&b' } },
      }),
    );
    assert.equal(body.text, '*Alert resolved*\nRule: CPU &lt;high&gt; (host=a&amp;b)');
  });

  it('retries only what may succeed later', () => {
    assert.equal(classify({ statusCode: 204 }), 'delivered');
    assert.equal(classify({ statusCode: 404 }), 'failed');
    assert.equal(classify({ statusCode: 429 }), 'retry');
    assert.equal(classify({ statusCode: 503 }), 'retry');
    assert.equal(classify({ error: 'ECONNREFUSED' }), 'retry');
    assert.equal(classify({ error: 'refused', refused: true }), 'failed');
  });
});
