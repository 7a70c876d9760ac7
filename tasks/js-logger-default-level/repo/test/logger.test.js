'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { createLogger } = require('../lib/logger');
const { LEVELS } = require('../lib/levels');

function capture(options) {
  const lines = [];
  return { log: createLogger({ ...options, write: (l) => lines.push(l) }), lines };
}

describe('createLogger', () => {
  it('explicit debug level shows debug', () => {
    const { log, lines } = capture({ level: 'debug' });
    log.debug('x');
    assert.deepEqual(lines, ['DEBUG x']);
  });
  it('warn level hides info', () => {
    const { log, lines } = capture({ level: 'warn' });
    log.info('x');
    log.error('y');
    assert.deepEqual(lines, ['ERROR y']);
  });
  it('formats level and message', () => {
    const { log, lines } = capture({ level: 'info' });
    log.warn('disk almost full');
    assert.deepEqual(lines, ['WARN disk almost full']);
  });
});

describe('levels', () => {
  it('ordered from debug to error', () => {
    assert.deepEqual(LEVELS, ['debug', 'info', 'warn', 'error']);
  });
});
