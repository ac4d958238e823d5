import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { componentLogger, createLogger, errorFields } from '../src/index.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe('logging', () => {
  it('writes JSON lines carrying role and component exactly once', () => {
    const { lines, destination } = capture();
    const log = createLogger('gateway', { destination, level: 'info' });
    log.info('main line');
    componentLogger(componentLogger(log, 'http'), 'auth').info('component line');
    assert.equal(lines[0]!.role, 'gateway');
    assert.equal(lines[0]!.component, 'main');
    assert.equal(lines[1]!.component, 'auth');
  });

  it('redacts passwords, tokens, signing keys and authorization headers', () => {
    const { lines, destination } = capture();
    createLogger('t', { destination }).info(
      {
        password: 'p1',
        body: { password: 'p2', token: 't1' },
        headers: { authorization: 'Bearer t2' },
        auth: { jwt: { signingKey: 'k' } },
      },
      'x',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['p1', 'p2', 't1', 'Bearer t2', '"k"']) assert.ok(!text.includes(secret), `${secret} in ${text}`);
  });

  it('logs an error as name, message, location and causes, never its stack trace', () => {
    const err = new Error('outer', { cause: new TypeError('inner') });
    const fields = errorFields(err) as { err: Record<string, unknown> };
    assert.equal(fields.err.name, 'Error');
    assert.equal(fields.err.message, 'outer');
    assert.deepEqual(fields.err.causes, ['TypeError: inner']);
    assert.match(String(fields.err.at), /logging\.test\.js:\d+:\d+/);
    assert.ok(!JSON.stringify(fields).includes('\\n    at '));
    assert.equal('stack' in fields.err, false);
  });
});
