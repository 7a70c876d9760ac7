'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');

describe('index', () => {
  it('exports every helper', () => {
    const strkit = require('../src');
    assert.deepEqual(Object.keys(strkit).sort(), ['padEnd', 'padStart', 'truncate']);
  });
  it('helpers work through the entry point', () => {
    const { padStart, truncate } = require('../src');
    assert.equal(padStart('5', 2, '0'), '05');
    assert.equal(truncate('hello', 3), 'he…');
  });
});
